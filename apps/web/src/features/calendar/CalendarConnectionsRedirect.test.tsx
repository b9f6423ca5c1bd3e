import { render, screen } from '@testing-library/react';
import { MemoryRouter } from 'react-router-dom';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CalendarConnectionsRedirect, CONNECTIONS_PAGE, NO_SERVER_PAGE } from './CalendarConnectionsRedirect.tsx';

describe('CalendarConnectionsRedirect', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('leaves the app for the server page when reached by navigating inside the app', () => {
    const assign = vi.fn();
    vi.stubGlobal('location', { ...window.location, assign });
    render(<CalendarConnectionsRedirect loadedPath="/chat" />);
    expect(screen.getByText('Opening calendar connections...')).toBeInTheDocument();
    expect(assign).toHaveBeenCalledWith(CONNECTIONS_PAGE);
  });

  it('says the page is not available, without reloading, when the server answered its address with the app', () => {
    const assign = vi.fn();
    vi.stubGlobal('location', { ...window.location, assign });
    for (const path of ['/accounts/3rdparty/', '/accounts/3rdparty']) {
      const { unmount } = render(
        <MemoryRouter>
          <CalendarConnectionsRedirect loadedPath={path} />
        </MemoryRouter>,
      );
      expect(screen.getByText('The calendar connections page is not available.')).toBeInTheDocument();
      // What happened and what helps; nothing promises a future release.
      expect(screen.getByText(NO_SERVER_PAGE)).toBeInTheDocument();
      expect(screen.queryByText(/upcoming release|not available yet/)).toBeNull();
      unmount();
    }
    expect(assign).not.toHaveBeenCalled();
  });
});
