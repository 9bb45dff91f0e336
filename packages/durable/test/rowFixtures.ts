/**
 * Task rows for the unit tests of durable's decision modules (`settle`, `completion`): plain
 * values, no store.
 */
import { Schedule } from "@tickwork/core"
import type { TaskRow } from "../src/internal/model.ts"

/** Slots every 1_000 ms from 0. */
export const grid = (Schedule.resolve(Schedule.fixedRate(1_000), 0) as Schedule.Resolved).plan

/** A running row of a fixed-rate task at slot 1_000 (first attempt), every field distinct. */
export const running = (fields: Partial<TaskRow> = {}): TaskRow =>
  ({
    id: "t",
    generation: 2,
    handler: "h",
    plan: grid,
    state: "running",
    slot: 1_000,
    runAt: 1_000,
    claimableAt: 9_000,
    attempt: 1,
    runNumber: 4,
    consecutiveFailures: 0,
    deliveries: 3,
    fence: 7,
    leaseOwner: "me",
    seq: 17,
    finishedAt: null,
    lastError: "before",
    pausedReason: null,
    resumeFrom: -1,
    windowMs: null,
    restart: undefined,
    retry: { maxRetries: 2, base: 100, factor: 1, maxDelay: 100, jitter: "none" },
    missedRuns: "skip",
    pauseAfter: 0,
    tags: ["a"],
    kept: undefined,
    ...fields,
  }) as unknown as TaskRow

/** {@link running} at its second attempt, claimed by `p1` at revision 11, with retries left. */
export const claimed = (fields: Partial<TaskRow> = {}): TaskRow =>
  running({
    attempt: 2,
    revision: 11,
    leaseOwner: "p1",
    lastError: null,
    retry: { maxRetries: 3, base: 100, factor: 1, maxDelay: 100, jitter: "full" },
    tags: [],
    ...fields,
  } as Partial<TaskRow>)
