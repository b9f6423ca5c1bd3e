// The chat's per-user queues (lanes), and how many of one user's messages may wait in one.

/** Messages of one user waiting for an answer at most; beyond it new ones are refused. */
export const MAX_WAITING = 20;

/**
 * Per user: messages are stored in arrival order (`stored`), answered one at a time (`turns`),
 * and learned from one at a time (`learned`), so one user's burst never runs many model calls.
 */
export interface Lane {
  stored: Promise<unknown>;
  turns: Promise<unknown>;
  learned: Promise<unknown>;
  /** Messages received and not answered yet, the one being answered included. */
  waiting: number;
  learning: number;
}

export function createLanes() {
  const lanes = new Map<number, Lane>();
  return {
    of(userId: number): Lane {
      let lane = lanes.get(userId);
      if (!lane) {
        lane = {
          stored: Promise.resolve(),
          turns: Promise.resolve(),
          learned: Promise.resolve(),
          waiting: 0,
          learning: 0,
        };
        lanes.set(userId, lane);
      }
      return lane;
    },
    /** Forgets the lane once nothing of the user's is waiting or being learned from. */
    release(userId: number, lane: Lane) {
      if (!lane.waiting && !lane.learning && lanes.get(userId) === lane) lanes.delete(userId);
    },
  };
}

export type Lanes = ReturnType<typeof createLanes>;
