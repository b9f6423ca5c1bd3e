// The usage meter adds calls' tokens up and writes them in one statement a second (not one per model
// call), counts what is not written yet against the daily allowance, and writes the rest on close.
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { UsageLimitError } from './model.errors.ts';
import type { Llm, LlmUsage } from './model.types.ts';
import type { ModelUsageRepo, UsageRow } from './model.usage.repo.ts';
import { createUsageMeter } from './model.usage.ts';

const log = pino({ level: 'silent' });

/** A model whose every structured call reports `usage`. */
function modelSpending(usage: LlmUsage): Llm {
  return {
    model: 'm',
    async *stream() {},
    async structured<T>(request: { onUsage?: (u: LlmUsage) => void }) {
      request.onUsage?.(usage);
      return {} as T;
    },
    refuses: () => false,
    refusals: () => [],
  } as unknown as Llm;
}

function fakeRepo(spentBefore = 0) {
  const writes: UsageRow[][] = [];
  const repo = {
    addMany: async (rows: UsageRow[]) => {
      writes.push(rows.map((r) => ({ ...r })));
    },
    spentToday: async () => spentBefore,
  } as unknown as ModelUsageRepo;
  return { repo, writes };
}

const ask = (llm: Llm, userId: number) =>
  llm.structured({ messages: [], name: 'x', description: 'x', parameters: {}, schema: {} as never, userId });

let closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing) await close();
  closing = [];
});

describe('the usage meter', () => {
  it('writes many calls of a user and purpose as one row, once, with their sums', async () => {
    const { repo, writes } = fakeRepo();
    const meter = createUsageMeter({ repo, dailyLimit: null, log, flushMs: 60_000 });
    closing.push(() => meter.close());
    const llm = meter.meter(modelSpending({ prompt: 100, cached: 60, completion: 10 }), 'chat');
    for (let i = 0; i < 5; i++) await ask(llm, 7);
    await ask(llm, 8);
    expect(writes).toEqual([]);
    await meter.close();
    expect(writes).toHaveLength(1);
    expect(writes[0]).toEqual([
      expect.objectContaining({ userId: 7, purpose: 'chat', calls: 5, prompt: 500, cached: 300, completion: 50 }),
      expect.objectContaining({ userId: 8, purpose: 'chat', calls: 1, prompt: 100, cached: 60, completion: 10 }),
    ]);
    expect(writes[0]?.[0]?.day).toBe(new Date().toISOString().slice(0, 10));
  });

  it('writes on its own within the interval', async () => {
    const { repo, writes } = fakeRepo();
    const meter = createUsageMeter({ repo, dailyLimit: null, log, flushMs: 20 });
    closing.push(() => meter.close());
    await ask(meter.meter(modelSpending({ prompt: 3, completion: 2 }), 'learning'), 7);
    const until = Date.now() + 5000;
    while (!writes.length && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    expect(writes.flat()).toEqual([expect.objectContaining({ userId: 7, purpose: 'learning', calls: 1, prompt: 3 })]);
  });

  it('counts tokens not written yet against the daily allowance', async () => {
    const { repo } = fakeRepo(900);
    const meter = createUsageMeter({ repo, dailyLimit: 1000, log, flushMs: 60_000 });
    closing.push(() => meter.close());
    const llm = meter.meter(modelSpending({ prompt: 80, completion: 20 }), 'chat');
    await ask(llm, 7);
    // 900 written + 100 counted here: the allowance is spent, for this user only.
    await expect(ask(llm, 7)).rejects.toBeInstanceOf(UsageLimitError);
    await expect(ask(llm, 8)).resolves.toEqual({});
  });
});
