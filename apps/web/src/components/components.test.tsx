import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { Banner } from './Banner.tsx';
import { ConfirmDialog } from './ConfirmDialog.tsx';
import { ErrorBoundary } from './ErrorBoundary.tsx';
import { Modal } from './Modal.tsx';

function Harness() {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        Open
      </button>
      <Modal open={open} onClose={() => setOpen(false)} title="Dialog">
        <button type="button">First</button>
        <button type="button">Last</button>
      </Modal>
    </>
  );
}

let fail = true;
function Flaky() {
  if (fail) throw new Error('boom');
  return <p>All good</p>;
}

describe('Modal', () => {
  it('is a labelled dialog that takes focus and closes on Escape and background click', async () => {
    const onClose = vi.fn();
    render(
      <Modal open onClose={onClose} title="Edit Memory" size="large">
        <input aria-label="Key" />
      </Modal>,
    );
    const dialog = screen.getByRole('dialog', { name: 'Edit Memory' });
    expect(dialog).toHaveAttribute('aria-modal', 'true');
    expect(dialog).toHaveClass('modal-large');
    expect(screen.getByLabelText('Key')).toHaveFocus();
    await userEvent.keyboard('{Escape}');
    expect(onClose).toHaveBeenCalledTimes(1);
    await userEvent.click(screen.getByTestId('modal-backdrop'));
    expect(onClose).toHaveBeenCalledTimes(2);
    await userEvent.click(dialog);
    expect(onClose).toHaveBeenCalledTimes(2);
  });

  it('stays open while closing is disabled', async () => {
    const onClose = vi.fn();
    render(
      <Modal open onClose={onClose} title="Saving" disableClose size="small">
        <p>Please wait</p>
      </Modal>,
    );
    await userEvent.keyboard('{Escape}');
    await userEvent.click(screen.getByTestId('modal-backdrop'));
    expect(onClose).not.toHaveBeenCalled();
    expect(screen.queryByRole('button', { name: 'Close dialog' })).not.toBeInTheDocument();
  });

  it('keeps Tab inside and gives focus back when it closes', async () => {
    render(<Harness />);
    const opener = screen.getByRole('button', { name: 'Open' });
    await userEvent.click(opener);
    expect(screen.getByRole('button', { name: 'First' })).toHaveFocus();
    await userEvent.tab();
    expect(screen.getByRole('button', { name: 'Last' })).toHaveFocus();
    await userEvent.tab();
    expect(screen.getByRole('button', { name: 'Close dialog' })).toHaveFocus();
    await userEvent.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    expect(opener).toHaveFocus();
  });

  it('renders nothing when closed', () => {
    render(
      <Modal open={false} onClose={() => {}} title="Hidden">
        x
      </Modal>,
    );
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });
});

describe('ConfirmDialog', () => {
  it('has Confirm and Cancel by default', async () => {
    const onConfirm = vi.fn();
    const onCancel = vi.fn();
    render(<ConfirmDialog open title="Sure?" message="Really?" onConfirm={onConfirm} onCancel={onCancel} />);
    expect(screen.getByRole('alertdialog', { name: 'Sure?' })).toHaveTextContent('Really?');
    await userEvent.click(screen.getByRole('button', { name: 'Confirm' }));
    await userEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(onConfirm).toHaveBeenCalledTimes(1);
    expect(onCancel).toHaveBeenCalledTimes(1);
  });

  it('takes custom labels and a danger style', () => {
    render(
      <ConfirmDialog
        open
        danger
        title="Confirm Deletion"
        message="This action cannot be undone."
        confirmLabel="Delete"
        onConfirm={() => {}}
        onCancel={() => {}}
      />,
    );
    expect(screen.getByRole('button', { name: 'Delete' })).toHaveClass('btn-danger');
  });
});

describe('Banner', () => {
  it('announces an error and can be dismissed', async () => {
    const onDismiss = vi.fn();
    render(<Banner onDismiss={onDismiss}>Failed to load your memories. Please try again later.</Banner>);
    expect(screen.getByRole('alert')).toHaveTextContent('Failed to load your memories. Please try again later.');
    await userEvent.click(screen.getByRole('button', { name: 'Dismiss' }));
    expect(onDismiss).toHaveBeenCalled();
  });

  it('has no close button when not dismissible', () => {
    render(<Banner variant="info">Connected</Banner>);
    expect(screen.getByRole('status')).toHaveTextContent('Connected');
    expect(screen.queryByRole('button')).not.toBeInTheDocument();
  });
});

describe('ErrorBoundary', () => {
  it('shows the global fallback and recovers with Try again', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    fail = true;
    render(
      <ErrorBoundary>
        <Flaky />
      </ErrorBoundary>,
    );
    expect(screen.getByRole('heading', { name: 'Sorry, something went wrong' })).toBeInTheDocument();
    expect(screen.getByText(/refresh the page/)).toBeInTheDocument();
    fail = false;
    await userEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect(screen.getByText('All good')).toBeInTheDocument();
  });
});
