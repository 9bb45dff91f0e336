/** The chaos run's sizes: the full one (`pnpm chaos`) and the short one run by `pnpm test`. */
import type { ChaosOptions } from "./chaos.ts"

/** `pnpm chaos`: 20k one-shots over 40 s, faults throughout, a server restart. */
export const FULL: ChaosOptions = {
  oneShots: 20_000,
  recurring: 100,
  periodMs: 500,
  durationMs: 40_000,
  killEveryMs: 3_000,
  terminateEveryMs: 2_000,
  restart: true,
  // Long enough that a loaded machine's event-loop lag does not cost leases.
  leaseMs: 10_000,
  seed: 7,
}

/** `pnpm test`: fewer tasks and faults, no server restart (pg-restart.test.ts has those). */
export const CI: ChaosOptions = {
  oneShots: 1_500,
  recurring: 20,
  periodMs: 500,
  durationMs: 15_000,
  killEveryMs: 2_500,
  terminateEveryMs: 2_500,
  restart: false,
  leaseMs: 4_000,
  seed: 11,
}

/**
 * `pnpm chaos --sqlite`: one SQLite worker, 10k one-shots and 100 recurring tasks over 40 s, a
 * SIGKILL at a random time about every 2 s, restarted on the same file, and the disk under the
 * store full for a while about every 8 s.
 */
export const SQLITE_FULL: ChaosOptions = {
  oneShots: 10_000,
  recurring: 50,
  periodMs: 500,
  durationMs: 40_000,
  killEveryMs: 2_000,
  terminateEveryMs: Number.POSITIVE_INFINITY,
  restart: false,
  leaseMs: 10_000,
  seed: 5,
  diskFullEveryMs: 8_000,
}

/** `pnpm chaos --sqlite --short`. */
export const SQLITE_CI: ChaosOptions = {
  ...SQLITE_FULL,
  oneShots: 1_500,
  recurring: 20,
  durationMs: 15_000,
  seed: 13,
  diskFullEveryMs: 5_000,
}
