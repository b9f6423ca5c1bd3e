// The banners about the connection: offline, the outage in progress (with its retry countdown and a
// button to try at once), and signed out.
import { CLOSE_CODES } from '@daybook/contracts';
import { Link } from 'react-router-dom';
import { Banner } from '../../components/Banner.tsx';
import { type ChatSocket, SOCKET_ERROR } from './useChatSocket.ts';
import type { ConnectionState } from './useConnectionState.ts';

export const OFFLINE_NOTICE = 'You are offline. Messages you sent wait here and go out when you are back online.';
export const SIGNED_OUT = 'You have been signed out.';

function closeHint(code: number | null) {
  if (code === CLOSE_CODES.policyViolation) return 'Your session may have expired.';
  if (code === CLOSE_CODES.tryAgainLater) return 'The assistant is busy right now.';
  return '';
}

export function ConnectionBanners({ socket, connection }: { socket: ChatSocket; connection: ConnectionState }) {
  const { outage, reconnecting, retryIn } = connection;
  // The countdown changes every second: it is shown, but screen readers hear one steady sentence.
  const retryText = reconnecting ? (
    'Reconnecting...'
  ) : retryIn === null ? null : (
    <>
      <span aria-hidden="true">Trying again in {retryIn} s.</span>
      <span className="visually-hidden">Trying again shortly.</span>
    </>
  );
  const reconnectButton = (label: string) => (
    <button
      type="button"
      className="btn btn-secondary btn-sm"
      // Not `disabled` while an attempt runs, so focus stays on it; a click then does nothing.
      aria-disabled={reconnecting || undefined}
      onClick={() => {
        if (!reconnecting) socket.reconnect();
      }}
    >
      {label}
    </button>
  );
  return (
    <>
      {/* One banner per outage, of the kind it began as, through every retry until a socket opens. */}
      {socket.offline && <Banner variant="info">{OFFLINE_NOTICE}</Banner>}
      {!socket.offline && outage === 'disconnected' && (
        <Banner variant="info" action={reconnectButton('Reconnect')}>
          You are disconnected. {closeHint(socket.closeCode)} {retryText}
        </Banner>
      )}
      {!socket.offline && outage === 'error' && (
        <Banner action={reconnectButton('Retry')}>
          {socket.error ?? SOCKET_ERROR} {retryText}
        </Banner>
      )}
      {socket.signedOut && (
        <Banner
          action={
            <Link to="/auth/login" className="btn btn-secondary btn-sm">
              Sign in
            </Link>
          }
        >
          {SIGNED_OUT}
        </Banner>
      )}
    </>
  );
}
