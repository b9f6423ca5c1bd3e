import { PassThrough } from 'node:stream';
import {
  MEMORY_IMPORT_BYTES_MAX,
  MEMORY_IMPORT_MAX,
  MEMORY_MAX,
  ZMemory,
  ZMemoryCategories,
  ZMemoryExport,
  ZMemoryPage,
} from '@daybook/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedInUser } from '../../test/factories.ts';
import { Browser, createTestApp, type TestApp } from '../../test/test-app.ts';
import { IMPORT_RUNNING, LIMIT_REACHED } from './memories.service.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const M = '/api/memories/';

async function seed(browser: Browser, n: number, prefix = 'k') {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const res = await browser.post(M, { key: `${prefix}-${i}`, data: `value ${i}` });
    expect(res.statusCode).toBe(201);
    ids.push(res.json().id);
  }
  return ids;
}

describe('create, read, update', () => {
  it('creates a memory with defaults and reads it back', async () => {
    const { browser } = await signedInUser(t);
    const res = await browser.post(M, { key: 'home city', data: 'Lisbon' });
    expect(res.statusCode).toBe(201);
    const memory = ZMemory.parse(res.json());
    expect(memory).toMatchObject({
      key: 'home city',
      data: 'Lisbon',
      memory_type: 'text',
      memory_type_display: 'Fact',
      url: null,
      frequency_description: null,
      source: 'user',
      source_message_id: null,
      deleted_at: null,
      deleted_reason: null,
    });
    expect((await browser.get(`${M}${memory.id}/`)).json()).toEqual(memory);
  });

  it('stores every field and trims text', async () => {
    const { browser } = await signedInUser(t);
    const res = await browser.post(M, {
      key: '  climbing ',
      data: ' Goes climbing every Saturday ',
      memory_type: 'activity',
      url: 'https://climbing.example.org/gym',
      frequency_description: ' weekly ',
    });
    expect(res.json()).toMatchObject({
      key: 'climbing',
      data: 'Goes climbing every Saturday',
      memory_type: 'activity',
      memory_type_display: 'Activity',
      url: 'https://climbing.example.org/gym',
      frequency_description: 'weekly',
    });
  });

  it('PUT replaces, PATCH changes only what it names', async () => {
    const { browser } = await signedInUser(t);
    const { id } = (
      await browser.post(M, { key: 'tea', data: 'green', memory_type: 'preference', url: 'https://tea.example' })
    ).json();
    const put = await browser.put(`${M}${id}/`, { key: 'tea', data: 'oolong' });
    expect(put.json()).toMatchObject({ data: 'oolong', memory_type: 'text', url: null });
    const patch = await browser.patch(`${M}${id}/`, { frequency_description: 'daily', url: '' });
    expect(patch.json()).toMatchObject({ data: 'oolong', frequency_description: 'daily', url: null });
  });

  it('rejects invalid fields with the API error shape', async () => {
    const { browser } = await signedInUser(t);
    const res = await browser.post(M, {
      key: '',
      data: '   ',
      memory_type: 'mood',
      url: 'ftp://x',
      frequency_description: 'x'.repeat(201),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'Some fields are invalid.',
      code: 'validation_error',
      field_errors: {
        key: ['Key is required.'],
        data: ['Memory data cannot be blank.'],
        memory_type: ['Choose one of: text, interest, activity, location, preference, person, website.'],
        url: ['Enter a URL starting with http:// or https://.'],
        frequency_description: ['Frequency must be at most 200 characters.'],
      },
    });
    const long = await browser.post(M, { key: 'k'.repeat(201), data: 'd'.repeat(10_001) });
    expect(long.json().field_errors).toEqual({
      key: ['Key must be at most 200 characters.'],
      data: ['Data must be at most 10,000 characters.'],
    });
    expect((await browser.post(M, { key: 'a', data: 'b', owner: 3 })).statusCode).toBe(400);
    expect((await browser.post(M, { key: 'max', data: 'd'.repeat(10_000) })).statusCode).toBe(201);
  });

  it('drops NUL characters, which the database cannot store, instead of failing', async () => {
    const { browser } = await signedInUser(t);
    const res = await browser.post(M, { key: 'ca\u0000fe', data: 'Flat\u0000 white' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ key: 'cafe', data: 'Flat white' });
    const search = await browser.get(`${M}?search=${encodeURIComponent('fla\u0000t')}`);
    expect(search.statusCode).toBe(200);
  });

  it('keeps keys unique among active memories, but a deleted key can be used again', async () => {
    const { browser } = await signedInUser(t);
    const first = (await browser.post(M, { key: 'dog', data: 'Rex' })).json();
    const dup = await browser.post(M, { key: 'dog', data: 'Fido' });
    expect(dup.statusCode).toBe(400);
    expect(dup.json()).toEqual({
      error: 'You already have a memory with this key.',
      code: 'validation_error',
      field_errors: { key: ['You already have a memory with this key.'] },
    });
    const other = (await browser.post(M, { key: 'cat', data: 'Tom' })).json();
    expect((await browser.patch(`${M}${other.id}/`, { key: 'dog' })).statusCode).toBe(400);

    await browser.delete(`${M}${first.id}/`);
    const again = await browser.post(M, { key: 'dog', data: 'Fido' });
    expect(again.statusCode).toBe(201);
    // Restoring the old one now would make two active "dog"s: refused.
    const restore = await browser.patch(`${M}${first.id}/`, { restore_deleted: true });
    expect(restore.statusCode).toBe(400);
    expect(restore.json().field_errors.key).toEqual(['You already have a memory with this key.']);
  });
});

describe('delete and restore', () => {
  it('soft-deletes with a reason, lists it as deleted, and restores it', async () => {
    const { browser } = await signedInUser(t);
    const { id } = (await browser.post(M, { key: 'job', data: 'Designer' })).json();
    const del = await browser.delete(`${M}${id}/`, { reason: 'Changed jobs' });
    expect(del.statusCode).toBe(204);
    const deleted = (await browser.get(`${M}${id}/`)).json();
    expect(deleted.deleted_at).not.toBeNull();
    expect(deleted.deleted_reason).toBe('Changed jobs');
    expect((await browser.get(M)).json().count).toBe(0);
    const deletedPage = ZMemoryPage.parse((await browser.get(`${M}?show_deleted=true`)).json());
    expect(deletedPage.results.map((m) => m.id)).toEqual([id]);

    const edit = await browser.patch(`${M}${id}/`, { data: 'Architect' });
    expect(edit.statusCode).toBe(409);
    expect(edit.json()).toEqual({ error: 'This memory is deleted. Restore it to edit it.', code: 'conflict' });

    const restored = await browser.put(`${M}${id}/`, { key: 'job', data: 'Architect', restore_deleted: true });
    expect(restored.statusCode).toBe(200);
    expect(restored.json()).toMatchObject({ data: 'Architect', deleted_at: null, deleted_reason: null });
    expect((await browser.get(`${M}?show_deleted=true`)).json().count).toBe(0);
    expect((await browser.get(M)).json().count).toBe(1);
  });

  it('deletes without a reason; deleting a deleted memory removes it for good', async () => {
    const { browser } = await signedInUser(t);
    const { id } = (await browser.post(M, { key: 'x', data: 'y' })).json();
    expect((await browser.delete(`${M}${id}/`)).statusCode).toBe(204);
    expect((await browser.get(`${M}${id}/`)).json().deleted_reason).toBeNull();
    expect((await browser.delete(`${M}${id}/`)).statusCode).toBe(204);
    expect((await browser.get(`${M}${id}/`)).statusCode).toBe(404);
    expect((await browser.get(`${M}?show_deleted=true`)).json().count).toBe(0);
  });
});

describe('listing', () => {
  it.each([0, 1, 30, 31, 61])('pages through %i memories, 30 at a time, newest first without overlap', async (n) => {
    const { browser } = await signedInUser(t);
    const ids = await seed(browser, n);
    const seen: number[] = [];
    let url: string | null = `${M}?limit=30&offset=0`;
    let pages = 0;
    while (url) {
      const page = ZMemoryPage.parse((await browser.get(url.replace('http://daybook.test', ''))).json());
      expect(page.count).toBe(n);
      expect(page.results.length).toBeLessThanOrEqual(30);
      if (pages === 0) expect(page.previous).toBeNull();
      seen.push(...page.results.map((m) => m.id));
      url = page.next;
      pages++;
    }
    expect(pages).toBe(Math.max(1, Math.ceil(n / 30)));
    expect(seen).toEqual([...ids].reverse());
  });

  it('links next and previous pages with absolute URLs that keep the filters', async () => {
    const { browser } = await signedInUser(t);
    await seed(browser, 5, 'walk');
    const page = (await browser.get(`${M}?limit=2&offset=2&search=walk`)).json();
    expect(page.next).toBe('http://daybook.test/api/memories/?limit=2&offset=4&search=walk');
    expect(page.previous).toBe('http://daybook.test/api/memories/?limit=2&offset=0&search=walk');
  });

  it('searches key and data, case-insensitively', async () => {
    const { browser } = await signedInUser(t);
    await browser.post(M, { key: 'Sport', data: 'Plays Tennis on Sundays' });
    await browser.post(M, { key: 'tennis club', data: 'Member since 2020' });
    await browser.post(M, { key: 'food', data: 'Vegetarian' });
    const res = ZMemoryPage.parse((await browser.get(`${M}?search=TENNIS`)).json());
    expect(res.results.map((m) => m.key).sort()).toEqual(['Sport', 'tennis club']);
    expect(res.count).toBe(2);
    expect((await browser.get(`${M}?search=100%25`)).json().count).toBe(0);
  });

  it("lists every memory exactly as its own endpoint presents it, whatever its text (the page's JSON is PostgreSQL's)", async () => {
    const { browser, userId } = await signedInUser(t);
    const texts = [
      'plain',
      'quotes " and \\ backslashes',
      'line\nbreak\ttab \u0001 control',
      'emoji 🎾 and ünïcödé, 漢字',
      '</script><b>html</b>',
    ];
    for (const [i, data] of texts.entries())
      await browser.post(M, {
        key: `k${i} ${data}`.slice(0, 100),
        data,
        memory_type: i % 2 ? 'interest' : 'text',
        ...(i === 1 ? { url: 'https://example.org/a?b=c&d="e"', frequency_description: 'weekly' } : {}),
      });
    // A type this version does not know (written by a newer one, or by hand) reads as text.
    await t.database.db.query(
      `INSERT INTO memories (user_id, key, data, memory_type, updated_at) VALUES ($1, 'odd', 'x', 'unknown', now())`,
      [userId],
    );
    const deletedId = (await browser.post(M, { key: 'gone', data: 'soon' })).json().id;
    await browser.delete(`${M}${deletedId}/`, { reason: 'outdated' });
    for (const query of ['', 'search=k', 'show_deleted=true', 'search=gone&show_deleted=true']) {
      const res = await browser.get(`${M}?${query}`);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      const page = ZMemoryPage.parse(res.json());
      expect(page.results.length, query).toBeGreaterThan(0);
      for (const memory of page.results) expect(memory, query).toEqual((await browser.get(`${M}${memory.id}/`)).json());
    }
    const all = ZMemoryPage.parse((await browser.get(M)).json()).results;
    expect(all.find((m) => m.key === 'odd')).toMatchObject({ memory_type: 'text', memory_type_display: 'Fact' });
    expect(all.map((m) => m.data)).toEqual(expect.arrayContaining(texts));
  });

  it('answers a repeated search from the ids it kept, and every change shows in the next answer', async () => {
    const { browser, userId } = await signedInUser(t);
    const keys = async (query: string) =>
      ZMemoryPage.parse((await browser.get(`${M}?${query}`)).json()).results.map((m) => m.key);
    const ids: number[] = [];
    for (const key of ['tennis 1', 'tennis 2', 'tennis 3', 'golf'])
      ids.push((await browser.post(M, { key, data: 'sport' })).json().id);
    expect(await keys('search=tennis&limit=2')).toEqual(['tennis 3', 'tennis 2']);
    // The next page and the same page again come from the kept ids.
    expect(await keys('search=tennis&limit=2&offset=2')).toEqual(['tennis 1']);
    expect(await keys('search=tennis&limit=2')).toEqual(['tennis 3', 'tennis 2']);
    // An edit through the API.
    await browser.patch(`${M}${ids[1]}/`, { key: 'squash' });
    expect(await keys('search=tennis&limit=2')).toEqual(['tennis 3', 'tennis 1']);
    // A deletion: gone from the search, found in the deleted view's search.
    await browser.delete(`${M}${ids[2]}/`, {});
    expect(await keys('search=tennis')).toEqual(['tennis 1']);
    expect(await keys('search=tennis&show_deleted=true')).toEqual(['tennis 3']);
    // A change written by another process (another instance, the import worker, psql).
    await t.database.db.query(`UPDATE memories SET key = 'tennis 4' WHERE id = $1`, [ids[3]]);
    expect(await keys('search=tennis')).toEqual(['tennis 4', 'tennis 1']);
    await t.database.db.query(
      `INSERT INTO memories (user_id, key, data, updated_at) VALUES ($1, 'Tennis 5', 'x', now())`,
      [userId],
    );
    expect(await keys('search=tennis')).toEqual(['Tennis 5', 'tennis 4', 'tennis 1']);
    // The plain page too: kept, then changed behind this process's back.
    expect(await keys('limit=2')).toEqual(['Tennis 5', 'tennis 4']);
    expect(await keys('limit=2')).toEqual(['Tennis 5', 'tennis 4']);
    await t.database.db.query(
      `UPDATE memories SET data = 'y', key = 'renamed' WHERE key = 'Tennis 5' AND user_id = $1`,
      [userId],
    );
    expect(await keys('limit=2')).toEqual(['renamed', 'tennis 4']);
    expect((await browser.get(`${M}?limit=2`)).json().count).toBe(4);
    await t.database.db.query(`DELETE FROM memories WHERE key = 'renamed' AND user_id = $1`, [userId]);
    expect((await browser.get(`${M}?limit=2`)).json()).toMatchObject({ count: 3 });
    // Another user's same search is theirs alone.
    const other = await signedInUser(t);
    expect((await other.browser.get(`${M}?search=tennis`)).json()).toMatchObject({ count: 0, results: [] });
  });

  it('rejects bad query parameters', async () => {
    const { browser } = await signedInUser(t);
    for (const q of [
      'limit=0',
      'limit=101',
      'limit=abc',
      'limit=99999999999999999',
      'offset=-1',
      'offset=1.5',
      'offset=99999999999999999',
      'offset=2147483648',
    ]) {
      const res = await browser.get(`${M}?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().code).toBe('validation_error');
      // One clear message for the field, however the value is wrong.
      const [field] = q.split('=');
      expect(res.json().field_errors[field as string], q).toHaveLength(1);
    }
  });

  it('lists the memory types with labels and descriptions', async () => {
    const { browser } = await signedInUser(t);
    const categories = ZMemoryCategories.parse((await browser.get(`${M}categories/`)).json());
    expect(categories.map((c) => c.value)).toEqual([
      'text',
      'interest',
      'activity',
      'location',
      'preference',
      'person',
      'website',
    ]);
    expect(categories[0]).toEqual({ value: 'text', label: 'Fact', description: 'A general fact about you.' });
  });
});

describe('owner scoping', () => {
  it("answers 404 for another user's memory, for every method, and leaves it alone", async () => {
    const owner = await signedInUser(t);
    const { id } = (await owner.browser.post(M, { key: 'secret', data: 'mine' })).json();
    const other = await signedInUser(t);
    for (const res of [
      await other.browser.get(`${M}${id}/`),
      await other.browser.put(`${M}${id}/`, { key: 'secret', data: 'stolen' }),
      await other.browser.patch(`${M}${id}/`, { data: 'stolen' }),
      await other.browser.delete(`${M}${id}/`),
    ]) {
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'Memory not found.', code: 'not_found' });
    }
    expect((await other.browser.get(M)).json().count).toBe(0);
    expect((await owner.browser.get(`${M}${id}/`)).json()).toMatchObject({ data: 'mine', deleted_at: null });
  });

  it('answers 404 for ids that name nothing', async () => {
    const { browser } = await signedInUser(t);
    for (const id of ['999999', 'abc', '0', '1e3']) expect((await browser.get(`${M}${id}/`)).statusCode).toBe(404);
  });

  it('answers 401 without a session, for every endpoint', async () => {
    const browser = new Browser(t.app);
    for (const res of [
      await browser.get(M),
      await browser.post(M, { key: 'a', data: 'b' }),
      await browser.get(`${M}1/`),
      await browser.get(`${M}categories/`),
      await browser.get(`${M}export/`),
      await browser.post(`${M}import/`, { memories: [] }),
    ]) {
      expect(res.statusCode).toBe(401);
    }
  });
});

describe('export and import', () => {
  it('exports active memories as a file and imports them into another account, idempotently by key', async () => {
    const from = await signedInUser(t);
    await from.browser.post(M, { key: 'city', data: 'Lisbon', memory_type: 'location' });
    await from.browser.post(M, {
      key: 'news',
      data: 'Space launches',
      memory_type: 'interest',
      frequency_description: 'weekly',
      url: 'https://space.example',
    });
    const gone = (await from.browser.post(M, { key: 'old', data: 'forgotten' })).json();
    await from.browser.delete(`${M}${gone.id}/`);

    const res = await from.browser.get(`${M}export/`);
    expect(res.headers['content-disposition']).toMatch(
      /^attachment; filename="daybook-memories-\d{4}-\d{2}-\d{2}\.json"$/,
    );
    const file = ZMemoryExport.parse(res.json());
    expect(file.memories.map((m) => m.key)).toEqual(['city', 'news']);

    const to = await signedInUser(t);
    await to.browser.post(M, { key: 'city', data: 'Porto', memory_type: 'location' });
    expect((await to.browser.post(`${M}import/`, file)).json()).toEqual({ created: 1, updated: 1, unchanged: 0 });
    expect((await to.browser.post(`${M}import/`, file)).json()).toEqual({ created: 0, updated: 0, unchanged: 2 });
    const list = ZMemoryPage.parse((await to.browser.get(M)).json());
    expect(list.results.map((m) => [m.key, m.data, m.source]).sort()).toEqual([
      ['city', 'Lisbon', 'user'],
      ['news', 'Space launches', 'import'],
    ]);
    expect(list.results.find((m) => m.key === 'news')).toMatchObject({
      memory_type: 'interest',
      frequency_description: 'weekly',
      url: 'https://space.example',
    });
  });

  it('validates an import as a whole and changes nothing when any item is bad', async () => {
    const { browser } = await signedInUser(t);
    const res = await browser.post(`${M}import/`, {
      memories: [
        { key: 'ok', data: 'fine' },
        { key: '', data: 'x' },
      ],
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().field_errors).toEqual({ 'memories.1.key': ['Key is required.'] });
    expect((await browser.get(M)).json().count).toBe(0);
    expect((await browser.post(`${M}import/`, { hello: 'world' })).statusCode).toBe(400);
  });
});

const facts = (n: number, prefix = 'fact') =>
  Array.from({ length: n }, (_, i) => ({ key: `${prefix} ${i}`, data: `Fact number ${i}` }));

describe('limits', () => {
  it(`keeps at most ${MEMORY_MAX} active memories: adding, importing and restoring stop there, changing does not`, async () => {
    const { browser } = await signedInUser(t);
    const old = (await browser.post(M, { key: 'old', data: 'deleted before the import' })).json();
    await browser.delete(`${M}${old.id}/`);

    // A whole export of a full account imports in one go.
    expect(MEMORY_IMPORT_MAX).toBe(MEMORY_MAX);
    const memories = facts(MEMORY_MAX);
    expect((await browser.post(`${M}import/`, { memories })).json()).toEqual({
      created: MEMORY_MAX,
      updated: 0,
      unchanged: 0,
    });
    const tooMany = await browser.post(`${M}import/`, { memories: [...memories, { key: 'one more', data: 'x' }] });
    expect(tooMany.statusCode).toBe(400);

    const add = await browser.post(M, { key: 'one more', data: 'x' });
    expect(add.statusCode).toBe(409);
    expect(add.json()).toEqual({ error: LIMIT_REACHED, code: 'conflict' });
    expect(LIMIT_REACHED).toContain('10,000');

    const importOne = await browser.post(`${M}import/`, { memories: [{ key: 'one more', data: 'x' }] });
    expect(importOne.statusCode).toBe(409);
    expect(importOne.json()).toMatchObject({ code: 'conflict' });
    expect(importOne.json().error).toContain('you have 10,000 and it adds 1 new ones');

    const restore = await browser.patch(`${M}${old.id}/`, { restore_deleted: true });
    expect(restore.statusCode).toBe(409);
    expect(restore.json()).toEqual({ error: LIMIT_REACHED, code: 'conflict' });
    expect((await browser.get(`${M}${old.id}/`)).json().deleted_at).not.toBeNull();

    // Changing what is there still works, by import or by edit.
    expect(
      (await browser.post(`${M}import/`, { memories: [{ key: 'fact 0', data: 'Changed' }, memories[1]] })).json(),
    ).toEqual({ created: 0, updated: 1, unchanged: 1 });
    const page = ZMemoryPage.parse((await browser.get(`${M}?limit=1`)).json());
    expect(page.count).toBe(MEMORY_MAX);
    const first = page.results[0] as { id: number };
    expect((await browser.patch(`${M}${first.id}/`, { data: 'edited' })).statusCode).toBe(200);

    // Deleting one makes room for one.
    await browser.delete(`${M}${first.id}/`);
    expect((await browser.post(M, { key: 'one more', data: 'x' })).statusCode).toBe(201);
    expect((await browser.post(M, { key: 'two more', data: 'x' })).statusCode).toBe(409);
    expect((await browser.get(M)).json().count).toBe(MEMORY_MAX);
  });
});

describe('one import at a time', () => {
  /** An import whose upload the test feeds by hand; resolves with the response. */
  function slowImport(browser: Browser) {
    const body = new PassThrough();
    const response = browser.request('POST', `${M}import/`, body, { 'content-type': 'application/json' });
    /** Resolves once the server has taken what was written (it reads the body after claiming the import). */
    const taken = async () => {
      for (let i = 0; i < 500 && (body.readableLength > 0 || body.writableLength > 0); i++)
        await new Promise((r) => setTimeout(r, 10));
      expect(body.readableLength).toBe(0);
    };
    return { body, response, taken };
  }

  it("refuses a user's second import while the first runs, without holding back others", async () => {
    const { browser } = await signedInUser(t);
    const first = slowImport(browser);
    first.body.write('{"memories": [{"key": "a", "data": "first"}');
    await first.taken();

    const second = await browser.post(`${M}import/`, { memories: [{ key: 'b', data: 'second' }] });
    expect(second.statusCode).toBe(409);
    expect(second.json()).toEqual({ error: IMPORT_RUNNING, code: 'conflict' });
    const other = await signedInUser(t);
    expect((await other.browser.post(`${M}import/`, { memories: [{ key: 'c', data: 'x' }] })).statusCode).toBe(200);

    first.body.end(']}');
    expect((await first.response).json()).toEqual({ created: 1, updated: 0, unchanged: 0 });
    expect((await browser.post(`${M}import/`, { memories: [{ key: 'b', data: 'second' }] })).json()).toEqual({
      created: 1,
      updated: 0,
      unchanged: 0,
    });
  });

  it('frees the slot when an upload is cut off, refused as too large, or fails', async () => {
    const { browser } = await signedInUser(t);
    const cut = slowImport(browser);
    cut.body.write('{"memories": [');
    await cut.taken();
    cut.body.destroy(new Error('the client went away'));
    await cut.response.catch(() => undefined);

    const huge = await browser.request('POST', `${M}import/`, new PassThrough(), {
      'content-type': 'application/json',
      'content-length': String(MEMORY_IMPORT_BYTES_MAX + 1),
    });
    expect(huge.statusCode).toBe(413);
    expect(huge.json()).toMatchObject({ code: 'payload_too_large' });

    expect((await browser.post(`${M}import/`, { memories: [{ key: '', data: 'x' }] })).statusCode).toBe(400);
    expect((await browser.post(`${M}import/`, { memories: [{ key: 'a', data: 'x' }] })).statusCode).toBe(200);
  });
});
