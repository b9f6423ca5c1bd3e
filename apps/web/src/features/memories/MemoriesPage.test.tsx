import { MEMORY_IMPORT_BYTES_MAX, MEMORY_MESSAGES, type TMemory } from '@daybook/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { routes } from '../../app/routes.tsx';
import { deferred, type Handler, mockFetch, type RecordedRequest, reply, USER_ME } from '../../test/fetch.ts';
import { renderRoutes, signedIn } from '../../test/render.tsx';
import { MEMORIES_EXPORT_PATH } from './api.ts';
import { IMPORT_TOO_LARGE } from './ImportButton.tsx';
import { LOAD_FAILED } from './MemoriesPage.tsx';
import { BLANK_EDIT, BLANK_NEW, DELETE_FAILED, SAVE_FAILED } from './MemoryFormModal.tsx';

const LIST = 'GET /api/memories/';

let nextId = 1;
function memory(fields: Partial<TMemory> = {}): TMemory {
  const id = fields.id ?? nextId++;
  return {
    id,
    key: `Memory ${id}`,
    data: `Something to remember, number ${id}.`,
    memory_type: 'text',
    memory_type_display: 'Fact',
    url: null,
    frequency_description: null,
    source: 'user',
    source_message_id: null,
    created_at: '2025-05-01T10:00:00.000Z',
    updated_at: '2025-05-01T10:00:00.000Z',
    deleted_at: null,
    deleted_reason: null,
    ...fields,
  };
}

const page = (results: TMemory[], count = results.length) => reply(200, { results, count, next: null, previous: null });

const params = (request: RecordedRequest) => Object.fromEntries(new URLSearchParams(request.search));

function open(path: string, routesByKey: Record<string, Handler>, { strict = false } = {}) {
  const network = mockFetch({
    'GET /api/users/me/': reply(200, USER_ME),
    'GET /api/memories/categories/': reply(200, [
      { value: 'text', label: 'Fact', description: 'A general fact about you.' },
      { value: 'interest', label: 'Interest', description: 'A topic to follow.' },
    ]),
    ...routesByKey,
  });
  const view = renderRoutes(routes, { path, auth: signedIn, strict });
  const main = within(screen.getByRole('main'));
  const lists = () => network.calls(LIST).map(params);
  return { ...network, ...view, main, lists };
}

describe('Memories', () => {
  it('lists memories with data cut at 100 and URLs cut at 30, type and frequency', async () => {
    const data = `${'I like long walks by the sea '.repeat(5)}and more.`;
    const url = 'https://www.example.org/a/very/long/path/to/a/page';
    const { main, lists } = open('/memories', {
      [LIST]: page([
        memory({
          key: 'Walks',
          data,
          url,
          memory_type: 'interest',
          memory_type_display: 'Interest',
          frequency_description: 'weekly',
        }),
      ]),
    });
    expect(await main.findByRole('heading', { level: 1, name: 'Your Memories' })).toBeInTheDocument();
    expect(main.getByText('Manage what your assistant remembers about you.')).toBeInTheDocument();
    const row = (await main.findByRole('cell', { name: 'Walks' })).closest('tr') as HTMLElement;
    const cut = `${data.slice(0, 100)}…`;
    expect(within(row).getByText(cut)).toHaveAttribute('title', data);
    const link = within(row).getByRole('link', { name: `${url.slice(0, 30)}… (opens in a new tab)` });
    expect(link).toHaveAttribute('href', url);
    expect(link).toHaveAttribute('target', '_blank');
    expect(link).toHaveAttribute('rel', 'noopener noreferrer');
    expect(within(row).getByText('Interest')).toBeInTheDocument();
    expect(within(row).getByText('weekly')).toBeInTheDocument();
    expect(within(row).getByRole('button', { name: 'Edit memory Walks' })).toBeInTheDocument();
    expect(within(row).getByRole('button', { name: 'Delete memory Walks' })).toBeInTheDocument();
    expect(main.getAllByRole('columnheader').map((th) => th.textContent)).toEqual([
      'Key',
      'Data',
      'Type',
      'URL',
      'Frequency',
      'Actions',
    ]);
    expect(main.getByText('1 memory')).toBeInTheDocument();
    expect(lists()).toEqual([{ limit: '30', offset: '0' }]);
  });

  it('wraps a bare array answer into a page', async () => {
    const { main } = open('/memories', { [LIST]: reply(200, [memory({ key: 'Tea' }), memory({ key: 'Cats' })]) });
    expect(await main.findByText('Tea')).toBeInTheDocument();
    expect(main.getByText('2 memories')).toBeInTheDocument();
    expect(main.queryByRole('navigation', { name: 'Memory pages' })).not.toBeInTheDocument();
  });

  it('pages 30 at a time only when there is more than one page, keeping the page in the URL', async () => {
    const first = Array.from({ length: 30 }, () => memory());
    const second = Array.from({ length: 5 }, () => memory());
    const { main, lists, router } = open(
      '/memories',
      {
        [LIST]: (request) => (params(request).offset === '30' ? page(second, 35) : page(first, 35)),
      },
      { strict: true },
    );
    const pages = await main.findByRole('navigation', { name: 'Memory pages' });
    expect(within(pages).getByRole('button', { name: 'Page 1' })).toHaveAttribute('aria-current', 'page');
    expect(within(pages).getByRole('button', { name: 'Previous' })).toBeDisabled();
    await userEvent.click(within(pages).getByRole('button', { name: 'Page 2' }));
    expect(await main.findByText(second[0]?.key as string)).toBeInTheDocument();
    expect(lists().at(-1)).toEqual({ limit: '30', offset: '30' });
    expect(router.state.location.search).toBe('?page=2');
    // Focus goes to the list, not <body>, so the keyboard goes on from the new page.
    expect(main.getByRole('region', { name: 'Memory list' })).toHaveFocus();
    expect(within(pages).getByRole('button', { name: 'Page 2' })).toHaveAttribute('aria-current', 'page');
    expect(within(pages).getByRole('button', { name: 'Next' })).toBeDisabled();

    await userEvent.click(within(pages).getByRole('button', { name: 'Previous' }));
    expect(await main.findByText(first[0]?.key as string)).toBeInTheDocument();
    expect(router.state.location.search).toBe('');
  });

  it('shows no pagination for a single page of exactly 30', async () => {
    const { main } = open('/memories', {
      [LIST]: page(
        Array.from({ length: 30 }, () => memory()),
        30,
      ),
    });
    expect(await main.findByText('30 memories')).toBeInTheDocument();
    expect(main.queryByRole('navigation', { name: 'Memory pages' })).not.toBeInTheDocument();
  });

  it('moves back a page when the page asked for is past the last one', async () => {
    const { main, lists, router } = open('/memories?page=3', {
      [LIST]: (request) =>
        params(request).offset === '60'
          ? page([], 35)
          : page(
              Array.from({ length: 5 }, () => memory()),
              35,
            ),
    });
    await waitFor(() => expect(router.state.location.search).toBe('?page=2'));
    // The count showed as soon as the empty page 3 answered: wait for page 2's own rows.
    await waitFor(() => expect(main.getAllByRole('row')).toHaveLength(6));
    expect(main.getByText('35 memories')).toBeInTheDocument();
    expect(lists().map((q) => q.offset)).toEqual(['60', '30']);
  });

  it('switches to the deleted memories: Restore instead of Edit, no Add New Memory', async () => {
    const gone = memory({ key: 'Old job', deleted_at: '2025-06-01T08:30:00.000Z', deleted_reason: 'Changed jobs' });
    const { main, lists, router } = open('/memories', {
      [LIST]: (request) => (params(request).show_deleted === 'true' ? page([gone]) : page([memory({ key: 'Tea' })])),
    });
    expect(await main.findByText('Tea')).toBeInTheDocument();
    expect(main.getByRole('button', { name: 'Add New Memory' })).toBeInTheDocument();

    await userEvent.click(main.getByRole('checkbox', { name: 'Show deleted memories' }));
    expect(await main.findByText('Old job')).toBeInTheDocument();
    expect(lists().at(-1)).toEqual({ limit: '30', offset: '0', show_deleted: 'true' });
    expect(router.state.location.search).toBe('?deleted=1');
    expect(main.queryByRole('button', { name: 'Add New Memory' })).not.toBeInTheDocument();
    expect(main.getByRole('button', { name: 'Restore memory Old job' })).toHaveTextContent('Restore');
    expect(main.queryByRole('button', { name: /^Edit memory/ })).not.toBeInTheDocument();
    // The key cell is named by the key alone; the deleted date sits under the data.
    const row = main.getByRole('cell', { name: 'Old job' }).closest('tr') as HTMLElement;
    expect(within(row).getByText(/^Deleted/)).toHaveTextContent(/^Deleted \w+/);
    expect(main.getByText('1 deleted memory')).toBeInTheDocument();
  });

  it.each([
    ['/memories', 'No memories found', 'Click Add New Memory to add one'],
    [
      '/memories?deleted=1',
      'No deleted memories found',
      'not deleted any memories, or you have restored or permanently deleted all of them',
    ],
  ])('%s shows its empty state', async (path, title, note) => {
    const { main } = open(path, { [LIST]: page([]) });
    const heading = await main.findByRole('heading', { name: title });
    expect(heading.parentElement).toHaveTextContent(note);
  });

  it('searches on the server once typing pauses, from page 1, keeping the search in the URL', async () => {
    const { main, lists, router } = open('/memories?page=2', {
      [LIST]: (request) =>
        params(request).search
          ? page([memory({ key: 'Coffee' })])
          : page(
              Array.from({ length: 30 }, () => memory()),
              40,
            ),
    });
    await main.findByText('40 memories');
    await userEvent.type(main.getByRole('searchbox', { name: 'Search memories' }), 'coffee');
    expect(await main.findByText('Coffee')).toBeInTheDocument();
    expect(lists().at(-1)).toEqual({ limit: '30', offset: '0', search: 'coffee' });
    expect(lists().filter((q) => q.search)).toHaveLength(1);
    expect(router.state.location.search).toBe('?q=coffee');
  });

  it('says when a search matches nothing', async () => {
    const { main } = open('/memories?q=zebra', { [LIST]: page([]) });
    expect(await main.findByRole('heading', { name: 'No memories match "zebra".' })).toBeInTheDocument();
    expect(main.getByRole('searchbox', { name: 'Search memories' })).toHaveValue('zebra');
  });

  it('links a memory learned in chat or in onboarding to its message', async () => {
    const { main } = open('/memories', {
      [LIST]: page([
        memory({ key: 'Runs', source: 'chat', source_message_id: 42 }),
        memory({ key: 'Name', source: 'onboarding', source_message_id: 3 }),
        memory({ key: 'Typed' }),
      ]),
    });
    expect(await main.findByRole('link', { name: 'Learned from chat' })).toHaveAttribute('href', '/chat?message=42');
    expect(main.getByRole('link', { name: 'Learned during onboarding' })).toHaveAttribute(
      'href',
      '/onboarding?message=3',
    );
    expect(main.getByRole('cell', { name: 'Runs' })).toBeInTheDocument();
    expect(main.getAllByRole('link', { name: /^Learned/ })).toHaveLength(2);
  });

  it('shows the load failure in a dismissible banner', async () => {
    const { main } = open('/memories', { [LIST]: reply(500, { error: 'Internal server error', code: 'internal' }) });
    const alert = await main.findByRole('alert');
    expect(alert).toHaveTextContent(LOAD_FAILED);
    await userEvent.click(within(alert).getByRole('button', { name: 'Dismiss' }));
    expect(main.queryByText(LOAD_FAILED)).not.toBeInTheDocument();
  });

  describe('the memory form', () => {
    it('adds a memory and refreshes the list', async () => {
      const created = memory({
        key: 'Tennis',
        data: 'Plays tennis',
        memory_type: 'interest',
        memory_type_display: 'Interest',
        frequency_description: 'weekly',
      });
      const { main, calls } = open('/memories', {
        [LIST]: (_request, previous) => (previous === 0 ? page([]) : page([created])),
        'POST /api/memories/': reply(201, created),
      });
      await main.findByText('No memories found');
      await userEvent.click(main.getByRole('button', { name: 'Add New Memory' }));
      const dialog = within(screen.getByRole('dialog', { name: 'Add New Memory' }));
      expect(dialog.getByLabelText('Key')).toHaveFocus();
      expect(dialog.getByLabelText('Key')).toBeRequired();
      expect(dialog.getByLabelText('Data')).toBeRequired();
      expect(dialog.getByLabelText('Type')).toHaveValue('text');
      expect(dialog.getByLabelText('Type')).toHaveAccessibleDescription('A general fact about you.');
      expect(dialog.getByLabelText('URL')).toHaveAttribute('placeholder', 'https://example.com');
      expect(dialog.getByLabelText('Frequency')).toHaveAttribute('placeholder', "e.g. 'weekly'");

      await userEvent.type(dialog.getByLabelText('Key'), 'Tennis');
      await userEvent.type(dialog.getByLabelText('Data'), 'Plays tennis');
      await userEvent.selectOptions(dialog.getByLabelText('Type'), 'interest');
      expect(dialog.getByLabelText('Type')).toHaveAccessibleDescription('A topic to follow.');
      await userEvent.type(dialog.getByLabelText('Frequency'), 'weekly');
      await userEvent.click(dialog.getByRole('button', { name: 'Add Memory' }));

      expect(await main.findByText('Tennis')).toBeInTheDocument();
      expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
      expect(calls('POST /api/memories/')[0]?.body).toEqual({
        key: 'Tennis',
        data: 'Plays tennis',
        memory_type: 'interest',
        url: null,
        frequency_description: 'weekly',
      });
      expect(calls(LIST)).toHaveLength(2);
    });

    it('refuses blank data for a new memory', async () => {
      const { main, calls } = open('/memories', { [LIST]: page([]) });
      await userEvent.click(await main.findByRole('button', { name: 'Add New Memory' }));
      const dialog = within(screen.getByRole('dialog', { name: 'Add New Memory' }));
      await userEvent.type(dialog.getByLabelText('Key'), 'Nothing');
      await userEvent.type(dialog.getByLabelText('Data'), '   ');
      await userEvent.click(dialog.getByRole('button', { name: 'Add Memory' }));
      expect(dialog.getByLabelText('Data')).toHaveAccessibleDescription(BLANK_NEW);
      expect(calls('POST /api/memories/')).toHaveLength(0);
    });

    it('shows a duplicate key error from the server under Key', async () => {
      const { main } = open('/memories', {
        [LIST]: page([]),
        'POST /api/memories/': reply(400, {
          error: 'Please correct the errors below.',
          code: 'validation_error',
          field_errors: { key: ['You already have a memory with this key.'] },
        }),
      });
      await userEvent.click(await main.findByRole('button', { name: 'Add New Memory' }));
      const dialog = within(screen.getByRole('dialog', { name: 'Add New Memory' }));
      await userEvent.type(dialog.getByLabelText('Key'), 'Tea');
      await userEvent.type(dialog.getByLabelText('Data'), 'Green');
      await userEvent.click(dialog.getByRole('button', { name: 'Add Memory' }));
      await waitFor(() =>
        expect(dialog.getByLabelText('Key')).toHaveAccessibleDescription(/^You already have a memory with this key\./),
      );
      expect(dialog.getByLabelText('Key')).toHaveFocus();
      expect(dialog.queryByText(SAVE_FAILED)).not.toBeInTheDocument();
    });

    it('shows a save failure in the form and keeps it open', async () => {
      const tea = memory({ key: 'Tea' });
      const { main } = open('/memories', { [LIST]: page([tea]), [`PUT /api/memories/${tea.id}/`]: reply(500, {}) });
      await userEvent.click(await main.findByRole('button', { name: 'Edit memory Tea' }));
      const dialog = within(screen.getByRole('dialog', { name: 'Edit Memory' }));
      await userEvent.click(dialog.getByRole('button', { name: 'Save Changes' }));
      expect(await dialog.findByRole('alert')).toHaveTextContent(SAVE_FAILED);
      expect(dialog.getByRole('button', { name: 'Save Changes' })).toBeEnabled();
    });

    it('saves an edit in place', async () => {
      const tea = memory({ key: 'Tea', data: 'Green tea' });
      const { main, calls } = open('/memories', {
        [LIST]: page([tea]),
        [`PUT /api/memories/${tea.id}/`]: (request) => reply(200, { ...tea, ...(request.body as object) }),
      });
      await userEvent.click(await main.findByRole('button', { name: 'Edit memory Tea' }));
      const dialog = within(screen.getByRole('dialog', { name: 'Edit Memory' }));
      expect(dialog.getByLabelText('Data')).toHaveValue('Green tea');
      await userEvent.clear(dialog.getByLabelText('Data'));
      await userEvent.type(dialog.getByLabelText('Data'), 'Black tea, no sugar');
      await userEvent.click(dialog.getByRole('button', { name: 'Save Changes' }));
      expect(await main.findByText('Black tea, no sugar')).toBeInTheDocument();
      expect(calls(`PUT /api/memories/${tea.id}/`)[0]?.body).toEqual({
        key: 'Tea',
        data: 'Black tea, no sugar',
        memory_type: 'text',
        url: null,
        frequency_description: null,
      });
      expect(calls(LIST)).toHaveLength(1);
    });

    it('asks before an edit with blank data deletes the memory', async () => {
      const tea = memory({ key: 'Tea' });
      const other = memory({ key: 'Coffee' });
      const { main, calls } = open('/memories', {
        [LIST]: (_request, previous) => (previous === 0 ? page([tea, other]) : page([other])),
        [`DELETE /api/memories/${tea.id}/`]: { status: 204 },
      });
      await userEvent.click(await main.findByRole('button', { name: 'Edit memory Tea' }));
      const dialog = within(screen.getByRole('dialog', { name: 'Edit Memory' }));
      await userEvent.clear(dialog.getByLabelText('Data'));
      await userEvent.type(dialog.getByLabelText('Data'), '  ');
      await userEvent.click(dialog.getByRole('button', { name: 'Save Changes' }));

      const confirm = within(screen.getByRole('alertdialog'));
      expect(confirm.getByText(BLANK_EDIT)).toBeInTheDocument();
      await userEvent.keyboard('{Escape}');
      expect(screen.queryByRole('alertdialog')).not.toBeInTheDocument();
      expect(screen.getByRole('dialog', { name: 'Edit Memory' })).toBeInTheDocument();
      expect(calls(`DELETE /api/memories/${tea.id}/`)).toHaveLength(0);

      await userEvent.click(dialog.getByRole('button', { name: 'Save Changes' }));
      await userEvent.click(within(screen.getByRole('alertdialog')).getByRole('button', { name: 'Delete' }));
      await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
      expect(main.queryByText('Tea')).not.toBeInTheDocument();
      expect(main.getByText('1 memory')).toBeInTheDocument();
      expect(calls(`DELETE /api/memories/${tea.id}/`)).toHaveLength(1);
      expect(calls(`PUT /api/memories/${tea.id}/`)).toHaveLength(0);
    });

    it('restores a deleted memory: PUT with restore_deleted, and the count drops by 1', async () => {
      const gone = memory({ key: 'Old job', deleted_at: '2025-06-01T08:30:00.000Z', deleted_reason: null });
      const also = memory({ key: 'Old car', deleted_at: '2025-06-02T08:30:00.000Z', deleted_reason: 'Sold it' });
      const put = `PUT /api/memories/${gone.id}/`;
      const { main, calls } = open('/memories?deleted=1', {
        [LIST]: (_request, previous) => (previous === 0 ? page([gone, also]) : page([also])),
        [put]: (request) => reply(200, { ...gone, ...(request.body as object), deleted_at: null }),
      });
      expect(await main.findByText('2 deleted memories')).toBeInTheDocument();
      await userEvent.click(main.getByRole('button', { name: 'Restore memory Old job' }));
      const dialog = within(screen.getByRole('dialog', { name: 'Restore Memory' }));
      expect(dialog.getByText('Deleted At')).toBeInTheDocument();
      expect(dialog.getByText('Deletion Reason')).toBeInTheDocument();
      expect(dialog.getByText('No reason provided')).toBeInTheDocument();
      await userEvent.click(dialog.getByRole('button', { name: 'Restore Memory' }));

      expect(await main.findByText('1 deleted memory')).toBeInTheDocument();
      expect(main.queryByRole('cell', { name: 'Old job' })).not.toBeInTheDocument();
      expect(calls(put)[0]?.body).toMatchObject({ key: 'Old job', restore_deleted: true });
      expect(main.getByRole('status')).toHaveTextContent('Restored "Old job".');
    });
  });

  describe('deleting', () => {
    it('confirms, then deletes the memory', async () => {
      const tea = memory({ key: 'Tea' });
      const { main, calls } = open('/memories', {
        [LIST]: (_request, previous) => (previous === 0 ? page([tea]) : page([])),
        [`DELETE /api/memories/${tea.id}/`]: { status: 204 },
      });
      await userEvent.click(await main.findByRole('button', { name: 'Delete memory Tea' }));
      const confirm = within(screen.getByRole('alertdialog', { name: 'Confirm Deletion' }));
      expect(confirm.getByText('Are you sure you want to delete the memory "Tea"?')).toBeInTheDocument();
      // A soft delete: the dialog says where to get it back.
      expect(confirm.getByText('You can restore it from "Show deleted memories".')).toBeInTheDocument();
      expect(confirm.queryByText('This action cannot be undone.')).not.toBeInTheDocument();
      expect(confirm.getByRole('button', { name: 'Cancel' })).toBeInTheDocument();
      await userEvent.click(confirm.getByRole('button', { name: 'Delete' }));
      expect(await main.findByText('No memories found')).toBeInTheDocument();
      expect(calls(`DELETE /api/memories/${tea.id}/`)).toHaveLength(1);
      expect(screen.queryByRole('alertdialog')).not.toBeInTheDocument();
      // The row and its button are gone: focus is on the list, not <body>.
      expect(main.getByRole('region', { name: 'Memory list' })).toHaveFocus();
    });

    it('in the deleted view, warns that deleting is for good, and the empty view stays truthful', async () => {
      const old = memory({ key: 'Old job', deleted_at: '2025-05-01T00:00:00.000Z' });
      const { main } = open('/memories?deleted=1', {
        [LIST]: (_request, previous) => (previous === 0 ? page([old]) : page([])),
        [`DELETE /api/memories/${old.id}/`]: { status: 204 },
      });
      await userEvent.click(await main.findByRole('button', { name: 'Delete memory Old job' }));
      const confirm = within(screen.getByRole('alertdialog', { name: 'Confirm Deletion' }));
      expect(confirm.getByText('This action cannot be undone.')).toBeInTheDocument();
      expect(confirm.queryByText(/Show deleted memories/)).not.toBeInTheDocument();
      await userEvent.click(confirm.getByRole('button', { name: 'Delete' }));
      const heading = await main.findByRole('heading', { name: 'No deleted memories found' });
      expect(heading.parentElement).toHaveTextContent('or permanently deleted all of them');
    });

    it('explains a failed delete', async () => {
      const tea = memory({ key: 'Tea' });
      const { main } = open('/memories', { [LIST]: page([tea]), [`DELETE /api/memories/${tea.id}/`]: reply(500, {}) });
      await userEvent.click(await main.findByRole('button', { name: 'Delete memory Tea' }));
      await userEvent.click(within(screen.getByRole('alertdialog')).getByRole('button', { name: 'Delete' }));
      expect(await main.findByRole('alert')).toHaveTextContent(DELETE_FAILED);
      expect(main.getByText('Tea')).toBeInTheDocument();
    });
  });

  describe('import and export', () => {
    const upload = (main: ReturnType<typeof within>, text: string) =>
      userEvent.upload(
        main.getByLabelText('Import memories from a file'),
        new File([text], 'memories.json', { type: 'application/json' }),
      );

    /** Files handed to the browser's downloads (saveFile's link click), with their names. */
    function captureDownloads() {
      const saved: Array<{ name: string; blob: Blob }> = [];
      const blobs = new Map<string, Blob>();
      vi.stubGlobal(
        'URL',
        Object.assign(URL, {
          createObjectURL: (blob: Blob) => {
            const url = `blob:test/${blobs.size}`;
            blobs.set(url, blob);
            return url;
          },
          revokeObjectURL: () => {},
        }),
      );
      vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
        saved.push({ name: this.download, blob: blobs.get(this.href) as Blob });
      });
      return saved;
    }
    afterEach(() => vi.restoreAllMocks());

    /** The page, with the export answered by `answer` (a file, or an error in the API's shape). */
    function openWithExport(answer: () => Response | Promise<Response>) {
      const view = open('/memories', { [LIST]: page([memory({ key: 'Tea' })]) });
      const base = view.fetchMock.getMockImplementation();
      const exports: RequestInit[] = [];
      vi.stubGlobal('fetch', async (input: RequestInfo | URL, init: RequestInit = {}) => {
        if (String(input) === MEMORIES_EXPORT_PATH) {
          exports.push(init);
          return answer();
        }
        return base?.(input, init);
      });
      return { ...view, exports };
    }

    it('exports: downloads the file under the name the server gave', async () => {
      const text = JSON.stringify({
        format: 'daybook-memories',
        version: 1,
        memories: [{ key: 'Tea', data: 'Green' }],
      });
      const saved = captureDownloads();
      const { main, exports } = openWithExport(
        () =>
          new Response(text, {
            status: 200,
            headers: {
              'content-type': 'application/json; charset=utf-8',
              'content-disposition': 'attachment; filename="daybook-memories-2026-05-02.json"',
            },
          }),
      );
      await main.findByText('Tea');
      await userEvent.click(main.getByRole('button', { name: 'Export' }));
      await waitFor(() => expect(saved.map((s) => s.name)).toEqual(['daybook-memories-2026-05-02.json']));
      expect(await saved[0]?.blob.text()).toBe(text);
      expect(exports).toHaveLength(1);
      expect(exports[0]?.credentials).toBe('same-origin');
      expect(main.getByRole('button', { name: 'Export' })).toBeEnabled();
      expect(main.queryByRole('alert')).not.toBeInTheDocument();
    });

    it("shows the server's reason in a banner when the export is refused, and saves nothing", async () => {
      const saved = captureDownloads();
      const { main } = openWithExport(
        () =>
          new Response(JSON.stringify({ error: MEMORY_MESSAGES.exportLimit, code: 'rate_limited' }), {
            status: 429,
            headers: { 'content-type': 'application/json', 'retry-after': '1800' },
          }),
      );
      await main.findByText('Tea');
      await userEvent.click(main.getByRole('button', { name: 'Export' }));
      expect(await main.findByRole('alert')).toHaveTextContent(MEMORY_MESSAGES.exportLimit);
      expect(saved).toEqual([]);
      // The list is still there, and the banner goes when dismissed.
      expect(main.getByText('Tea')).toBeInTheDocument();
      await userEvent.click(within(main.getByRole('alert')).getByRole('button', { name: /dismiss/i }));
      expect(main.queryByRole('alert')).not.toBeInTheDocument();
    });

    it('says the export failed when the server cannot be reached', async () => {
      const saved = captureDownloads();
      const { main } = openWithExport(() => Promise.reject(new TypeError('Failed to fetch')));
      await main.findByText('Tea');
      await userEvent.click(main.getByRole('button', { name: 'Export' }));
      expect(await main.findByRole('alert')).toHaveTextContent(MEMORY_MESSAGES.exportFailed);
      expect(saved).toEqual([]);
    });

    it('shows the export as busy while it downloads', async () => {
      const answer = deferred<Response>();
      captureDownloads();
      const { main } = openWithExport(() => answer.promise);
      await main.findByText('Tea');
      await userEvent.click(main.getByRole('button', { name: 'Export' }));
      expect(main.getByRole('button', { name: 'Exporting...' })).toBeDisabled();
      answer.resolve(new Response('{"memories":[]}', { status: 200 }));
      expect(await main.findByRole('button', { name: 'Export' })).toBeEnabled();
    });

    it('imports an export file, reports the counts and reloads', async () => {
      const file = {
        format: 'daybook-memories',
        version: 1,
        exported_at: '2025-06-01T00:00:00.000Z',
        memories: [{ key: 'Tea', data: 'Green', memory_type: 'text' }],
      };
      const { main, calls } = open('/memories', {
        [LIST]: page([]),
        'POST /api/memories/import/': reply(200, { created: 3, updated: 1, unchanged: 2 }),
      });
      await main.findByText('No memories found');
      await upload(main, JSON.stringify(file));
      expect(await main.findByRole('status')).toHaveTextContent('Imported: 3 new, 1 updated, 2 unchanged.');
      expect(calls('POST /api/memories/import/')[0]?.body).toEqual(file);
      expect(calls(LIST)).toHaveLength(2);
    });

    it.each([
      ['not JSON', '{oops', 'The file is not valid JSON.'],
      ['without memories', '{"hello": 1}', 'Expected the file that "Export" downloads'],
      ['with a memory of the wrong kind', '{"memories": [{"key": 5, "data": "x"}]}', 'Memory 1 (key): must be text'],
    ])('refuses a file that is %s', async (_name, text, detail) => {
      const { main, calls } = open('/memories', { [LIST]: page([]) });
      await main.findByText('No memories found');
      await upload(main, text);
      const alert = await main.findByRole('alert');
      expect(alert).toHaveTextContent('That file is not a Daybook memories export.');
      expect(alert).toHaveTextContent(detail);
      expect(calls('POST /api/memories/import/')).toHaveLength(0);
    });

    it("shows the server's reason when it cannot take an import now", async () => {
      const running = 'An import is already running for your account. Try again when it has finished.';
      const { main } = open('/memories', {
        [LIST]: page([]),
        'POST /api/memories/import/': reply(409, { error: running, code: 'conflict' }),
      });
      await main.findByText('No memories found');
      await upload(main, JSON.stringify({ memories: [] }));
      expect(await main.findByRole('alert')).toHaveTextContent(running);
    });

    it('refuses a file over the size limit without sending it, and explains a 413', async () => {
      const { main, calls } = open('/memories', {
        [LIST]: page([]),
        'POST /api/memories/import/': reply(413, { error: 'Request body is too large', code: 'payload_too_large' }),
      });
      await main.findByText('No memories found');
      const big = new File(['{"memories": []}'], 'memories.json', { type: 'application/json' });
      Object.defineProperty(big, 'size', { value: MEMORY_IMPORT_BYTES_MAX + 1 });
      await userEvent.upload(main.getByLabelText('Import memories from a file'), big);
      const alert = await main.findByRole('alert');
      expect(alert).toHaveTextContent(IMPORT_TOO_LARGE);
      expect(alert).toHaveTextContent('This file is 20.0 MB.');
      expect(calls('POST /api/memories/import/')).toHaveLength(0);

      await upload(main, JSON.stringify({ memories: [] }));
      await waitFor(() => expect(calls('POST /api/memories/import/')).toHaveLength(1));
      expect(await main.findByRole('alert')).toHaveTextContent(IMPORT_TOO_LARGE);
    });

    it("shows the server's reasons for refusing a file", async () => {
      const { main } = open('/memories', {
        [LIST]: page([]),
        'POST /api/memories/import/': reply(400, {
          error: 'Please correct the errors below.',
          code: 'validation_error',
          field_errors: { 'memories.3.key': ['Key is required.'] },
        }),
      });
      await main.findByText('No memories found');
      await upload(main, JSON.stringify({ memories: [] }));
      const alert = await main.findByRole('alert');
      expect(alert).toHaveTextContent('That file is not a Daybook memories export.');
      expect(alert).toHaveTextContent('Memory 4 (key): Key is required.');
    });
  });
});
