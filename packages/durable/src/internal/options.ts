/**
 * @internal
 * Option checks shared by the durable scheduler's layer options, task options and handler
 * specs: each bad value is an `InvalidOption` naming the field and the value, and an unknown key
 * (a typo) is one too (SPEC §13, the core's `Errors.unknownKey`).
 */

import { randomUUID } from "node:crypto"
import { hostname } from "node:os"
import { Breaker, Options as CoreOptions, Errors, Results, Rules, type Time } from "@tickwork/core"
import type { Scheduler } from "@tickwork/runtime"
import { Schema } from "effect"
import type * as Handler from "../Handler.ts"
import * as Ids from "./ids.ts"

/** An `InvalidOption` for `field`: "`field` `rule`, got `value`" (the core's wording). */
export const optionError = CoreOptions.invalid

/** A whole number >= 1 (and at most `bound.max`, when given), `fallback` when absent. */
export const positiveInt = (
  field: string,
  value: number | undefined,
  fallback: number,
  bound?: CoreOptions.Bound,
): number | Errors.InvalidOption => CoreOptions.integer(field, value, fallback, 1, bound)

/** The core's bounds of size-like options. */
export const bounds = CoreOptions.bounds

/** Whole ms of a duration; `false` is +Infinity (none), absent is `fallback`. */
export const millis = CoreOptions.millis

/** The first key of `value` not in `known`, as an InvalidOption naming it. */
export const unknownKey = CoreOptions.unknownKey

/**
 * The shortest `lease`: 1 second (see `DurableScheduler.MIN_LEASE_MS` for why).
 */
export const MIN_LEASE_MS = 1_000

const DAY = 86_400_000

/** What closing a durable scheduler did (public as `DurableScheduler.DurableShutdownReport`). */
export interface ShutdownReport {
  readonly policy: Scheduler.ShutdownPolicy
  /** How long closing took, ms (monotonic clock): at most `shutdownTimeout + shutdownGrace`. */
  readonly elapsedMs: number
  /** Runs that completed (committed) while closing. */
  readonly completed: number
  /** Runs handed back to the store unfinished (due at once for another process). */
  readonly released: number
  /**
   * Tasks whose run was still going when the grace ran out (a job that ignores interruption):
   * their rows stay `running` under this process's lease until it expires, the session ends
   * (PostgreSQL) or the file is reopened (SQLite).
   */
  readonly abandoned: ReadonlyArray<string>
  /**
   * Tasks whose run ended but whose completion or hand-back the store did not take in time
   * (it failed or did not answer): their rows stay `running` as above.
   */
  readonly uncommitted: ReadonlyArray<string>
}

/**
 * The runtime options' own `shutdownTimeout` and `shutdownGrace`, ms (the durable ones when it
 * gives none): the in-memory runtime closes within the smaller of its own and the durable ones.
 */
export const runtimeShutdown = (
  resolved: Resolved,
): { readonly shutdownMs: number; readonly graceMs: number } | Errors.InvalidOption => {
  const shutdownMs = millis(
    "runtime.shutdownTimeout",
    resolved.runtime?.shutdownTimeout,
    resolved.shutdownMs,
  )
  if (typeof shutdownMs !== "number") return shutdownMs
  const graceMs = millis("runtime.shutdownGrace", resolved.runtime?.shutdownGrace, resolved.graceMs)
  if (typeof graceMs !== "number") return graceMs
  return { shutdownMs, graceMs }
}

/** The layer options, as given. */
export interface LayerOptions {
  readonly handlers: ReadonlyArray<Handler.Any>
  readonly claim?: boolean | undefined
  readonly workers?: number | undefined
  readonly lease?: Time.DurationInput | undefined
  readonly pollInterval?: Time.DurationInput | false | undefined
  /** The catch-up window of recurring tasks that give no `window` of their own. */
  readonly catchUpWindow?: Time.DurationInput | false | undefined
  readonly claimBatch?: number | undefined
  /**
   * How often a process on a shared store (PostgreSQL) looks for claims of processes whose
   * database session ended, and makes them due at once. Default 100 ms.
   */
  readonly takeoverInterval?: Time.DurationInput | undefined
  /**
   * What closing does with the runs this process holds. No new run starts under any policy.
   * `"drain"` (default) and `"cancel"` let running runs finish for up to `shutdownTimeout`, then
   * interrupt and hand back the rest; `"interrupt"` interrupts them and hands them back at once.
   * The tasks themselves are never cancelled: they belong to the store, and another process
   * runs them. Default: the runtime's `shutdown`, else `"drain"`.
   */
  readonly shutdown?: Scheduler.ShutdownPolicy | undefined
  /**
   * How long closing waits for running runs before interrupting them (see `shutdown`). Default:
   * the runtime's `shutdownTimeout`, else 30 s.
   */
  readonly shutdownTimeout?: Time.DurationInput | undefined
  /**
   * After `shutdownTimeout`, how long closing waits for the interrupted runs to end and be
   * handed back to the store. Runs that ignore interruption, or whose hand-back the store does
   * not take in time, are named in a warning and the shutdown report; the close ends anyway.
   * Closing takes at most `shutdownTimeout + shutdownGrace`. Default: the runtime's
   * `shutdownGrace`, else 5 s.
   */
  readonly shutdownGrace?: Time.DurationInput | undefined
  /** Called with the shutdown report (it is also logged). */
  readonly onShutdown?: ((report: ShutdownReport) => void) | undefined
  /**
   * Health bounds (see `DurableScheduler.health`): `stall`, how long work may be due with no run
   * starting on this process; `storeFailure`, how long the store may fail. Default 60 s each.
   * `background`: whether a fiber re-assesses health every 5 s (one store read each) to keep
   * the `tickwork_health` gauge current with nobody calling `health` (default true; the test
   * layer turns it off: a test reads `health`, which assesses and records on demand).
   */
  readonly health?:
    | {
        readonly stall?: Time.DurationInput | undefined
        readonly storeFailure?: Time.DurationInput | undefined
        readonly background?: boolean | undefined
      }
    | undefined
  readonly retention?: Time.DurationInput | false | undefined
  readonly seed?: number | undefined
  readonly owner?: string | undefined
  readonly streamCapacity?: number | undefined
  readonly runtime?: Omit<Scheduler.SchedulerOptions, "workers"> | undefined
  /**
   * Circuit breakers shared by name (SPEC §7): a task joins one with `breaker: "smtp"`. Each is
   * stored once for the whole fleet; giving a policy again (a process started with a new one)
   * replaces the stored policy, not the breaker's state.
   */
  readonly breakers?: Readonly<Record<string, Breaker.BreakerPolicy>> | undefined
  /**
   * The bound of a kept result (SPEC §19.3): UTF-8 bytes of the JSON text a handler's `result`
   * schema encodes. Default 64 KiB, at most 8 MiB; a larger value is not kept and the run
   * records `ResultTooLarge`.
   */
  readonly maxResultBytes?: number | undefined
  /**
   * Flow control (SPEC §20): at most `concurrency` runs at once and `rate: { max, per }` starts
   * per sliding window, per handler (`handlers: { <name>: … }`), per named group (a task joins
   * one with `group`) and per key (`keys`, each task's `key` separately). Enforced by the claim
   * across every process of the store: give every process the same limits.
   */
  readonly limits?:
    | (Rules.Limits & { readonly handlers?: Readonly<Record<string, Rules.Limit>> | undefined })
    | undefined
}

const layerKeys: ReadonlySet<string> = new Set([
  "handlers",
  "claim",
  "workers",
  "lease",
  "pollInterval",
  "catchUpWindow",
  "claimBatch",
  "takeoverInterval",
  "shutdown",
  "shutdownTimeout",
  "shutdownGrace",
  "onShutdown",
  "health",
  "retention",
  "seed",
  "owner",
  "streamCapacity",
  "runtime",
  "breakers",
  "maxResultBytes",
  "limits",
])

const healthKeys: ReadonlySet<string> = new Set(["stall", "storeFailure", "background"])

/** The keys of a handler made by `Handler.make`. */
const handlerKeys: ReadonlySet<string> = new Set(["name", "payload", "run", "result"])

/** The layer options checked, with their defaults. Times are ms; +Infinity means none. */
export interface Resolved {
  readonly handlers: ReadonlyMap<string, Handler.Any>
  /** The handlers' names: the tasks this process may claim. */
  readonly names: ReadonlyArray<string>
  readonly claim: boolean
  readonly workers: number
  readonly claimBatch: number
  readonly streamCapacity: number
  readonly leaseMs: number
  readonly pollMs: number
  /** See `takeoverInterval`. */
  readonly takeoverMs: number
  readonly windowMs: number
  readonly shutdownMs: number
  /** See `shutdownGrace`. */
  readonly graceMs: number
  readonly shutdown: Scheduler.ShutdownPolicy
  readonly onShutdown: ((report: ShutdownReport) => void) | undefined
  /** See `health`, ms. */
  readonly stallMs: number
  readonly storeFailureMs: number
  /** See `health.background`. */
  readonly healthBackground: boolean
  readonly retentionMs: number
  readonly seed: number
  readonly owner: string
  readonly runtime: Omit<Scheduler.SchedulerOptions, "workers"> | undefined
  /** The runtime options' `defaultTimeout`: a durable task without a timeout of its own gets it. */
  readonly defaultTimeoutMs: number
  /** Circuit breakers shared by name (`breaker: "smtp"`), validated. */
  readonly breakers: ReadonlyMap<string, Breaker.Resolved>
  /** See `maxResultBytes`. */
  readonly maxResultBytes: number
  /** See `limits`, checked by core's `Rules.resolveLimits`. */
  readonly limits: Rules.ResolvedLimits
}

/**
 * Checks the layer options: the first bad (or unknown) one is an InvalidOption. `exclusive`
 * says whether the store has one user (SQLite): then no poll is needed by default.
 */
export const resolve = (
  options: LayerOptions,
  exclusive: boolean,
): Resolved | Errors.InvalidOption => {
  if (typeof options !== "object" || options === null)
    return optionError("options", options, "must be an object")
  const unknown = unknownKey(options, layerKeys)
  if (unknown !== undefined) return unknown
  const handlers = new Map<string, Handler.Any>()
  if (!Array.isArray(options.handlers)) {
    return optionError("handlers", options.handlers, "must be an array of handlers")
  }
  for (const h of options.handlers) {
    if (typeof h?.name !== "string" || h.name === "" || typeof h.run !== "function") {
      return optionError("handlers", h, "must hold handlers made by Handler.make")
    }
    const extra = unknownKey(h, handlerKeys, `handlers[${Errors.show(h.name)}].`)
    if (extra !== undefined) return extra
    const badName = Ids.problem(h.name)
    if (badName !== undefined) {
      return optionError("handlers", h.name, `must hold handlers whose name ${badName}`)
    }
    if (handlers.has(h.name)) {
      return optionError("handlers", h.name, "must not name a handler twice")
    }
    handlers.set(h.name, h)
  }
  // Every size is bounded (the core's Options.bounds): the pool allocates `workers` slots.
  const workers = positiveInt("workers", options.workers, 4, bounds.workers)
  if (typeof workers !== "number") return workers
  const claimBatch = positiveInt("claimBatch", options.claimBatch, 100, bounds.claimBatch)
  if (typeof claimBatch !== "number") return claimBatch
  const streamCapacity = positiveInt(
    "streamCapacity",
    options.streamCapacity,
    10_000,
    bounds.streamCapacity,
  )
  if (typeof streamCapacity !== "number") return streamCapacity
  const leaseMs = millis("lease", options.lease, 30_000, true)
  if (typeof leaseMs !== "number") return leaseMs
  if (!Number.isFinite(leaseMs)) return optionError("lease", false, "must be a duration")
  if (leaseMs < MIN_LEASE_MS) {
    return optionError(
      "lease",
      options.lease,
      `must be at least ${MIN_LEASE_MS} ms (1 second; renewals need time on a loaded machine)`,
    )
  }
  const pollMs = millis("pollInterval", options.pollInterval, exclusive ? Infinity : 200, true)
  if (typeof pollMs !== "number") return pollMs
  const takeoverMs = millis("takeoverInterval", options.takeoverInterval, 100)
  if (typeof takeoverMs !== "number") return takeoverMs
  if (!Number.isFinite(takeoverMs) || takeoverMs < 1)
    return optionError("takeoverInterval", options.takeoverInterval, "must be at least 1 ms")
  const windowMs = millis("catchUpWindow", options.catchUpWindow, CoreOptions.defaultCatchUpWindow)
  if (typeof windowMs !== "number") return windowMs
  const shutdownMs =
    options.shutdownTimeout === undefined && options.runtime?.shutdownTimeout !== undefined
      ? millis("runtime.shutdownTimeout", options.runtime.shutdownTimeout, 30_000)
      : millis("shutdownTimeout", options.shutdownTimeout, 30_000)
  if (typeof shutdownMs !== "number") return shutdownMs
  const graceMs =
    options.shutdownGrace === undefined && options.runtime?.shutdownGrace !== undefined
      ? millis("runtime.shutdownGrace", options.runtime.shutdownGrace, 5_000)
      : millis("shutdownGrace", options.shutdownGrace, 5_000)
  if (typeof graceMs !== "number") return graceMs
  if (options.onShutdown !== undefined && typeof options.onShutdown !== "function") {
    return optionError("onShutdown", options.onShutdown, "must be a function")
  }
  const health = options.health ?? {}
  if (typeof health !== "object" || health === null) {
    return optionError("health", health, "must be an object")
  }
  const badHealthKey = unknownKey(health, healthKeys, "health.")
  if (badHealthKey !== undefined) return badHealthKey
  const stallMs = millis("health.stall", health.stall, 60_000)
  if (typeof stallMs !== "number") return stallMs
  const storeFailureMs = millis("health.storeFailure", health.storeFailure, 60_000)
  if (typeof storeFailureMs !== "number") return storeFailureMs
  const healthBackground = health.background ?? true
  if (typeof healthBackground !== "boolean") {
    return optionError("health.background", healthBackground, "must be a boolean")
  }
  const shutdown = options.shutdown ?? options.runtime?.shutdown ?? "drain"
  if (shutdown !== "drain" && shutdown !== "cancel" && shutdown !== "interrupt") {
    return optionError("shutdown", shutdown, 'must be "drain", "cancel" or "interrupt"')
  }
  const retentionMs = millis("retention", options.retention, 7 * DAY, true)
  if (typeof retentionMs !== "number") return retentionMs
  const seed = options.seed ?? 0
  if (!Number.isSafeInteger(seed)) return optionError("seed", seed, "must be an integer")
  const owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
  const badOwner = Ids.check("owner", owner)
  if (badOwner !== undefined) return badOwner
  const breakers = new Map<string, Breaker.Resolved>()
  const given = options.breakers ?? {}
  if (typeof given !== "object" || given === null || Array.isArray(given)) {
    return optionError("breakers", given, "must be an object of breaker policies by name")
  }
  for (const [name, policy] of Object.entries(given)) {
    const badName = Ids.problem(name)
    if (badName !== undefined) {
      return optionError("breakers", name, `must name each breaker with a name that ${badName}`)
    }
    const resolvedPolicy = Breaker.resolve(policy, `breakers.${name}`)
    if (!("failures" in resolvedPolicy)) return resolvedPolicy
    breakers.set(name, resolvedPolicy)
  }
  const maxResultBytes = Results.maxBytes("maxResultBytes", options.maxResultBytes)
  if (typeof maxResultBytes !== "number") return maxResultBytes
  for (const h of handlers.values()) {
    if (h.result !== undefined && !Schema.isSchema(h.result)) {
      return optionError(`handlers[${Errors.show(h.name)}].result`, h.result, "must be a Schema")
    }
  }
  const limits = Rules.resolveLimits(options.limits, "limits", { handlers: true })
  if (limits instanceof Errors.InvalidOption) return limits
  const defaultTimeout = options.runtime?.defaultTimeout
  const defaultTimeoutMs = millis("runtime.defaultTimeout", defaultTimeout, 0)
  if (typeof defaultTimeoutMs !== "number") return defaultTimeoutMs
  return {
    handlers,
    names: [...handlers.keys()],
    claim: options.claim !== false,
    workers,
    claimBatch,
    streamCapacity,
    leaseMs,
    pollMs,
    takeoverMs,
    windowMs,
    shutdownMs,
    graceMs,
    shutdown,
    onShutdown: options.onShutdown,
    stallMs,
    storeFailureMs,
    healthBackground,
    retentionMs,
    seed,
    owner,
    runtime: options.runtime,
    defaultTimeoutMs: Number.isFinite(defaultTimeoutMs) ? defaultTimeoutMs : 0,
    breakers,
    maxResultBytes,
    limits,
  }
}
