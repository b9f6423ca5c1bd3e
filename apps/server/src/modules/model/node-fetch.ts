// The fetch the model client uses: Node's own http(s) with keep-alive, handing the response body to
// `Response` as a Node stream. Every chat turn makes two model calls; this costs the server about
// half the CPU time of the built-in fetch per call (measured with `npm run bench`).
import http from 'node:http';
import https from 'node:https';

const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 256 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 256 }),
};

// Statuses whose responses have no body; `Response` refuses one for them.
const NO_BODY = new Set([101, 204, 205, 304]);

const abortError = (signal: AbortSignal): Error =>
  signal.reason instanceof Error ? signal.reason : new DOMException('The operation was aborted.', 'AbortError');

function plainHeaders(init: RequestInit['headers']) {
  const out: Record<string, string> = {};
  new Headers(init).forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

export function nodeFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const url = new URL(input instanceof Request ? input.url : input);
  const body = init.body;
  const protocol = url.protocol as keyof typeof agents;
  // Anything this small client does not speak goes to the built-in fetch.
  if (
    input instanceof Request ||
    !(protocol in agents) ||
    (body != null && typeof body !== 'string' && !(body instanceof Uint8Array))
  ) {
    return fetch(input, init);
  }
  const signal = init.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(abortError(signal));
  return new Promise((resolve, reject) => {
    const request = (protocol === 'https:' ? https : http).request(
      url,
      {
        method: init.method ?? 'GET',
        headers: plainHeaders(init.headers),
        agent: agents[protocol],
        signal,
      },
      (res) => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
        }
        // As with fetch, aborting while the body streams fails the read with an AbortError.
        if (signal) {
          const onAbort = () => res.destroy(abortError(signal));
          signal.addEventListener('abort', onAbort, { once: true });
          res.once('close', () => signal.removeEventListener('abort', onAbort));
        }
        const status = res.statusCode ?? 500;
        const init = { status, statusText: res.statusMessage, headers };
        if (NO_BODY.has(status)) {
          res.resume();
          resolve(new Response(null, init));
        } else if (/^text\/event-stream/i.test(res.headers['content-type'] ?? '')) {
          resolve(new Response(res as unknown as ReadableStream<Uint8Array>, init));
        } else {
          // Whole answers (JSON, errors) are read here first: cheaper than a web stream, and the
          // caller's timeout then covers the body too.
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve(new Response(Buffer.concat(chunks), init)));
          res.on('error', reject);
          res.on('close', () => {
            if (!res.complete) reject(new Error('the connection closed before the response ended'));
          });
        }
      },
    );
    request.on('error', reject);
    request.end(body ?? undefined);
  });
}
