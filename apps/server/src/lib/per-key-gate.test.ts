import { describe, expect, it } from 'vitest';
import { perKeyGate } from './per-key-gate.ts';

/** A piece of work the test finishes by hand. */
function pending() {
  let finish = () => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return { done, finish: () => finish() };
}
const settle = () => new Promise((r) => setTimeout(r, 0));

describe('perKeyGate', () => {
  it("runs a key's work two at a time, in arrival order, without holding back other keys", async () => {
    const run = perKeyGate(2);
    const started: string[] = [];
    const work = new Map<string, ReturnType<typeof pending>>();
    const submit = (key: number, name: string) => {
      const p = pending();
      work.set(name, p);
      return run(key, async () => {
        started.push(name);
        await p.done;
        return name;
      });
    };
    const flood = ['a1', 'a2', 'a3', 'a4'].map((name) => submit(1, name));
    const other = submit(2, 'b1');
    await settle();
    expect(started).toEqual(['a1', 'a2', 'b1']);

    work.get('b1')?.finish();
    expect(await other).toBe('b1');
    work.get('a2')?.finish();
    await settle();
    expect(started).toEqual(['a1', 'a2', 'b1', 'a3']);
    work.get('a1')?.finish();
    await settle();
    expect(started.at(-1)).toBe('a4');
    work.get('a3')?.finish();
    work.get('a4')?.finish();
    expect(await Promise.all(flood)).toEqual(['a1', 'a2', 'a3', 'a4']);
  });

  it('frees the slot when the work fails', async () => {
    const run = perKeyGate(1);
    await expect(run(1, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await run(1, async () => 'next')).toBe('next');
  });
});
