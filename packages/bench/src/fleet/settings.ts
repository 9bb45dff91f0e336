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
      work: {},
      says: "pollingIntervalSeconds 2, queue notify off, batchSize 1, expireInSeconds 900, supervise every 60 s",
    },
    fast: {
      constructor: { superviseIntervalSeconds: 1, monitorIntervalSeconds: 1 },
      queue: { notify: true, expireInSeconds: 1 },
      work: { pollingIntervalSeconds: 0.5, notifyPollingIntervalSeconds: 0.5 },
      says: "queue notify on, polling 0.5 s (the minimum), expireInSeconds 1 (the minimum: caps every job at 1 s), supervise/monitor every 1 s (the minimum)",
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
