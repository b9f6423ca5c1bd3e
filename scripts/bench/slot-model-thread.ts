// The slot-limited model (slot-model.ts) in a worker thread of its own, at the lowest priority on
// Linux: it stands for a model server on another machine, so its streaming must neither wait for the
// bench's clients nor take CPU the measured processes want. `answers` names its answer function,
// which a thread cannot be handed.
import { setPriority } from 'node:os';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { type ModelCall, type SlotModelOptions, type SlotModelRequest, startSlotModel } from './slot-model.ts';

type Answers = Record<string, (req: SlotModelRequest) => string>;

export interface ThreadOptions extends Omit<SlotModelOptions, 'answer' | 'keepPrompts'> {
  /** A module exporting `answers` (by name), and the name to use. */
  answersModule: string;
  answers: string;
  /** Keep the rendered prompts of streamed calls (for prefix measurements). */
  keepStreamedPrompts?: boolean;
}

/** Starts the model in a thread; `calls()` copies its call log out. */
export async function startSlotModelThread(options: ThreadOptions) {
  const tsxApi = import.meta.resolve('tsx/esm/api');
  const worker = new Worker(
    `import(${JSON.stringify(tsxApi)}).then((m) => { m.register(); return import(${JSON.stringify(import.meta.url)}); });`,
    { eval: true, workerData: options },
  );
  const next = <T>(type: string) =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (m: { type: string; value: T }) => {
        if (m.type !== type) return;
        worker.off('message', onMessage);
        resolve(m.value);
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
    });
  const baseUrl = await next<string>('ready');
  return {
    baseUrl,
    async calls(): Promise<ModelCall[]> {
      const reply = next<ModelCall[]>('calls');
      worker.postMessage('calls');
      return reply;
    },
    async close() {
      const closed = next<null>('closed');
      worker.postMessage('close');
      await closed;
      await worker.terminate();
    },
  };
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  const o = workerData as ThreadOptions;
  try {
    if (process.env.BENCH_MODEL_NICE !== '0') setPriority(0, 19);
  } catch {
    // Not allowed here: it runs at normal priority.
  }
  const { answers } = (await import(o.answersModule)) as { answers: Answers };
  const answer = answers[o.answers];
  if (!answer) throw new Error(`no answers named ${o.answers}`);
  const model = await startSlotModel({
    ...o,
    answer,
    keepPrompts: o.keepStreamedPrompts ? (req) => Boolean(req.stream) : undefined,
  });
  port.postMessage({ type: 'ready', value: model.baseUrl });
  port.on('message', async (m: string) => {
    if (m === 'calls') port.postMessage({ type: 'calls', value: model.calls });
    else if (m === 'close') {
      await model.close();
      port.postMessage({ type: 'closed', value: null });
    }
  });
}
