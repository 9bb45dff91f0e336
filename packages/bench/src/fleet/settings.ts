/**
 * The settings of each system in the fleet part: its documented defaults, and its fastest
 * documented settings. Every row runs 3 processes of `CONCURRENCY` jobs each (a sizing choice,
 * the same for all; each system's own default is lower: tickwork 4, pg-boss 1, graphile-worker 1).
 */

/** The queue / task / handler name. */
export const QUEUE = "noop"

/** Jobs in flight per process, every row. */
export const CONCURRENCY = 32

/** Which settings a row uses. */
export type Settings = "defaults" | "fast"

/** How each system is configured, and the sentence the tables print about it. */
export const settings = {
  tickwork: {
    defaults: {
      scheduler: {},
      says: "poll 200 ms, lease 30 s, takeover check 100 ms; LISTEN/NOTIFY on its session connection",
    },
    fast: {
      scheduler: { pollInterval: 50, takeoverInterval: 20 },
      says: "pollInterval 50 ms, takeoverInterval 20 ms",
    },
  },
  "pg-boss": {
    defaults: {
      constructor: {},
      queue: {},
      work: { localConcurrency: CONCURRENCY },
      says: "localConcurrency 32 (batchSize 1: one job per fetch), pollingIntervalSeconds 2, no LISTEN/NOTIFY, expireInSeconds 900, supervise every 60 s",
    },
    fast: {
      constructor: {
        useListenNotify: true,
        superviseIntervalSeconds: 1,
        monitorIntervalSeconds: 1,
      },
      queue: { notify: true, expireInSeconds: 1 },
      work: {
        localConcurrency: 4,
        batchSize: 8,
        burstWhenBatchFull: true,
        pollingIntervalSeconds: 0.5,
        notifyPollingIntervalSeconds: 0.5,
      },
      says: "useListenNotify + queue notify, localConcurrency 4 × batchSize 8 (32 in flight, a batch's jobs run concurrently), burstWhenBatchFull, polling 0.5 s (the minimum), expireInSeconds 1 (the minimum: it caps every job at 1 s), supervise/monitor every 1 s (the minimum)",
    },
  },
  "graphile-worker": {
    defaults: {
      says: "pollInterval 2000 ms, LISTEN/NOTIFY on, no local queue; locked jobs of a dead worker are freed after 4 h",
    },
    fast: {
      pollInterval: 100,
      preset: { worker: { localQueue: { size: CONCURRENCY + 1 }, completeJobBatchDelay: 0 } },
      says: "pollInterval 100 ms, localQueue size 33, completeJobBatchDelay 0 (docs: Performance)",
    },
  },
} as const
