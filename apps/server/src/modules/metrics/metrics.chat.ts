// The chat's metrics: open sockets, and turns by outcome and time.
import client from 'prom-client';

/** How a chat turn ended: a reply, the model's failure (the user got a notice), no model configured, or a crash. */
export type TurnOutcome = 'answered' | 'model_error' | 'not_configured' | 'error';

export function createChatMetrics(registers: client.Registry[]) {
  let sockets: () => number = () => 0;
  new client.Gauge({
    name: 'daybook_chat_open_sockets',
    help: 'Chat WebSockets open in this process.',
    registers,
    collect() {
      this.set(sockets());
    },
  });

  const turns = new client.Counter({
    name: 'daybook_chat_turns_total',
    help: 'Chat turns answered, by outcome (answered, model_error, not_configured, error).',
    labelNames: ['outcome'] as const,
    registers,
  });
  const turnSeconds = new client.Histogram({
    name: 'daybook_chat_turn_duration_seconds',
    help: "Time from a message's turn to its stored answer, by outcome.",
    labelNames: ['outcome'] as const,
    buckets: [0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120],
    registers,
  });

  return {
    /** The open chat sockets, read at each scrape. */
    collectSockets(count: () => number) {
      sockets = count;
    },

    /** Starts timing a chat turn; call the result once with how it ended. */
    chatTurn() {
      const start = performance.now();
      return (outcome: TurnOutcome) => {
        turns.inc({ outcome });
        turnSeconds.observe({ outcome }, (performance.now() - start) / 1000);
      };
    },
  };
}
