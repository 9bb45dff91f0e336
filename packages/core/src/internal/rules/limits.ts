/**
 * @internal
 * Flow control (SPEC §20): concurrency and rate limits per scope — a named group, or each key —
 * as pure functions over plain data (counts of running runs, recent start times), so the
 * in-memory kernel and a store that counts with SQL decide alike. Re-exported by `Rules.ts`.
 */
import { InvalidOption, show, unknownKey } from "../../Errors.ts"
import * as Options from "../../Options.ts"
import type { DurationInput } from "../../Time.ts"

/**
 * One scope's limits (SPEC §20.1, §20.2): at most `concurrency` runs at once, and at most
 * `rate.max` starts in any `rate.per` (a sliding window). Either may be absent: no such limit.
 *
 * @category models
 * @since 0.7.0
 */
export interface Limit {
  /** Runs of the scope running at once, 1 to 1,000,000. */
  readonly concurrency?: number | undefined
  /** Starts of the scope in any interval of `per` (ms or an Effect `Duration` input). */
  readonly rate?: { readonly max: number; readonly per: DurationInput } | undefined
}

/**
 * The limits a kernel (or store) enforces (SPEC §20): `groups` by name — a task joins one with
 * its `group` option — and `keys`, one limit applied to each distinct `key` separately (a task's
 * `key` option; `keys: { concurrency: 1 }` runs each key's tasks in series).
 *
 * @category models
 * @since 0.7.0
 */
export interface Limits {
  readonly groups?: Readonly<Record<string, Limit>> | undefined
  readonly keys?: Limit | undefined
  /**
   * Limits by handler name (scope `handler:<name>`): a durable store's only (its tasks name a
   * handler); `resolveLimits` accepts the key when asked to (`{ handlers: true }`).
   */
  readonly handlers?: Readonly<Record<string, Limit>> | undefined
}

/**
 * A {@link Limit} checked: `concurrency` and `rateMax` are +Infinity when absent; `ratePerMs` is
 * the window in ms (0 when there is no rate limit).
 *
 * @category models
 * @since 0.7.0
 */
export interface ResolvedLimit {
  readonly concurrency: number
  readonly rateMax: number
  readonly ratePerMs: number
}

/**
 * {@link Limits} checked: each group's limit by name, and the per-key limit (or none).
 *
 * @category models
 * @since 0.7.0
 */
export interface ResolvedLimits {
  readonly groups: ReadonlyMap<string, ResolvedLimit>
  readonly keys: ResolvedLimit | undefined
  /** Each handler's limit by name (a durable store's); absent or empty: none. */
  readonly handlers?: ReadonlyMap<string, ResolvedLimit> | undefined
}

/**
 * Why a due run waits instead of starting (SPEC §20): its scope has `concurrency` runs running,
 * or `rate.max` starts in the window (`rate-limited`).
 *
 * @category models
 * @since 0.7.0
 */
export type WaitCause = "concurrency" | "rate-limited"

/** @internal The largest `concurrency` and `rate.max`: a store keeps `rate.max` start times per scope. */
export const MAX_LIMIT = 1_000_000
/** @internal The longest key, in characters. */
export const MAX_KEY_LENGTH = 256

const limitKeys: ReadonlySet<string> = new Set(["concurrency", "rate"])
const rateKeys: ReadonlySet<string> = new Set(["max", "per"])
const limitsKeys: ReadonlySet<string> = new Set(["groups", "keys"])
const storeLimitsKeys: ReadonlySet<string> = new Set(["groups", "keys", "handlers"])
const bound: Options.Bound = {
  max: MAX_LIMIT,
  why: "a rate limit keeps this many start times per scope",
}

const isObject = (value: unknown): value is object => typeof value === "object" && value !== null

/**
 * Checks one scope's limit, each bad value an `InvalidOption` naming `field.concurrency`,
 * `field.rate.max` or `field.rate.per` and the value. Pure.
 *
 * @category constructors
 * @since 0.7.0
 */
export const resolveLimit = (limit: unknown, field: string): ResolvedLimit | InvalidOption => {
  if (!isObject(limit) || Array.isArray(limit)) {
    return Options.invalid(field, limit, "must be an object { concurrency?, rate? }")
  }
  const unknown = unknownKey(limit, limitKeys, `${field}.`)
  if (unknown !== undefined) return unknown
  const l = limit as Limit
  let concurrency = Number.POSITIVE_INFINITY
  if (l.concurrency !== undefined) {
    const c = Options.integer(`${field}.concurrency`, l.concurrency, 0, 1, bound)
    if (typeof c !== "number") return c
    concurrency = c
  }
  let rateMax = Number.POSITIVE_INFINITY
  let ratePerMs = 0
  if (l.rate !== undefined) {
    const rate: unknown = l.rate
    if (!isObject(rate) || Array.isArray(rate)) {
      return Options.invalid(`${field}.rate`, rate, "must be an object { max, per }")
    }
    const unknownRate = unknownKey(rate, rateKeys, `${field}.rate.`)
    if (unknownRate !== undefined) return unknownRate
    const r = rate as { readonly max: number; readonly per: DurationInput }
    if (r.max === undefined) return Options.invalid(`${field}.rate.max`, r.max, "is required")
    const max = Options.integer(`${field}.rate.max`, r.max, 0, 1, bound)
    if (typeof max !== "number") return max
    if (r.per === undefined) return Options.invalid(`${field}.rate.per`, r.per, "is required")
    const per = Options.millis(`${field}.rate.per`, r.per, 0, true)
    if (typeof per !== "number") return per
    rateMax = max
    ratePerMs = per
  }
  return { concurrency, rateMax, ratePerMs }
}

/**
 * Checks a kernel's or store's {@link Limits}: the typed error of the first bad value (naming
 * `limits.groups.<name>.…` or `limits.keys.…`), or the limits resolved. Pure.
 *
 * **Example** (Five emails at once; each customer's tasks in series)
 *
 * ```ts
 * import { Rules } from "@tickwork/core"
 * const r = Rules.resolveLimits({ groups: { email: { concurrency: 5 } }, keys: { concurrency: 1 } })
 * "groups" in r && r.groups.get("email")?.concurrency // 5
 * ```
 *
 * @category constructors
 * @since 0.7.0
 */
export const resolveLimits = (
  limits: unknown,
  field = "limits",
  accept: { readonly handlers?: boolean | undefined } = {},
): ResolvedLimits | InvalidOption => {
  const withHandlers = accept.handlers === true
  if (limits === undefined) return { groups: new Map(), keys: undefined }
  if (!isObject(limits) || Array.isArray(limits)) {
    return Options.invalid(
      field,
      limits,
      `must be an object { ${withHandlers ? "handlers?, " : ""}groups?, keys? }`,
    )
  }
  const unknown = unknownKey(limits, withHandlers ? storeLimitsKeys : limitsKeys, `${field}.`)
  if (unknown !== undefined) return unknown
  const l = limits as Limits
  const named = (given: unknown, at: string): Map<string, ResolvedLimit> | InvalidOption => {
    const out = new Map<string, ResolvedLimit>()
    if (given === undefined) return out
    if (!isObject(given) || Array.isArray(given)) {
      return Options.invalid(at, given, "must be an object of limits by name")
    }
    for (const [name, limit] of Object.entries(given)) {
      const r = resolveLimit(limit, `${at}.${name}`)
      if (r instanceof InvalidOption) return r
      out.set(name, r)
    }
    return out
  }
  const groups = named(l.groups, `${field}.groups`)
  if (groups instanceof InvalidOption) return groups
  const handlers = named(withHandlers ? l.handlers : undefined, `${field}.handlers`)
  if (handlers instanceof InvalidOption) return handlers
  let keys: ResolvedLimit | undefined
  if (l.keys !== undefined) {
    const r = resolveLimit(l.keys, `${field}.keys`)
    if (r instanceof InvalidOption) return r
    keys = r
  }
  return handlers.size === 0 ? { groups, keys } : { groups, keys, handlers }
}

/**
 * A task's scopes (SPEC §20): `handler:<name>` when its `handler` (a durable task's) has a limit,
 * `group:<name>` for its `group`, `key:<key>` for its `key`, in that order; the typed error naming `group` or `key` for a group not declared in `limits`, a key
 * that is not a string of 1–256 characters, or a key given while `limits.keys` is not declared
 * (it would limit nothing). Pure.
 *
 * @category constructors
 * @since 0.7.0
 */
export const scopesOf = (
  group: unknown,
  key: unknown,
  limits: ResolvedLimits,
  handler?: string | undefined,
): ReadonlyArray<string> | InvalidOption => {
  const out: Array<string> = []
  // A handler with a limit puts every task of it in its scope; one without, in none.
  if (handler !== undefined && limits.handlers?.has(handler) === true) {
    out.push(`handler:${handler}`)
  }
  if (group !== undefined) {
    if (typeof group !== "string" || !limits.groups.has(group)) {
      const known = [...limits.groups.keys()].map((g) => show(g)).join(", ")
      return new InvalidOption({
        field: "group",
        value: group,
        message: `group must name a group declared in limits.groups (${known || "none declared"}), got ${show(group)}`,
      })
    }
    out.push(`group:${group}`)
  }
  if (key !== undefined) {
    if (typeof key !== "string" || key.length === 0 || key.length > MAX_KEY_LENGTH) {
      return Options.invalid("key", key, `must be a string of 1 to ${MAX_KEY_LENGTH} characters`)
    }
    if (limits.keys === undefined) {
      return Options.invalid("key", key, "limits nothing: declare limits.keys first")
    }
    out.push(`key:${key}`)
  }
  return out
}

/**
 * The limit of scope `scope` (as {@link scopesOf} names it), or `undefined` for an unknown one.
 *
 * @category combinators
 * @since 0.7.0
 */
export const limitOf = (limits: ResolvedLimits, scope: string): ResolvedLimit | undefined =>
  scope.startsWith("group:")
    ? limits.groups.get(scope.slice(6))
    : scope.startsWith("handler:")
      ? limits.handlers?.get(scope.slice(8))
      : scope.startsWith("key:")
        ? limits.keys
        : undefined

/**
 * What a scope holds when a run asks to start: its limit, how many of its runs are running now,
 * and its most recent start times, ascending (at least the last `limit.rateMax` of them when it
 * has a rate limit; older ones are ignored).
 *
 * @category models
 * @since 0.7.0
 */
export interface ScopeLoad {
  readonly limit: ResolvedLimit
  readonly running: number
  readonly starts: ReadonlyArray<number>
}

/**
 * The earliest instant `>= at` at which a scope with `starts` (ascending) may start one more run
 * under its rate limit: a sliding window, at most `rateMax` starts in any `[t - per, t)`… that is,
 * a start at `t` is allowed when fewer than `rateMax` starts are later than `t - per`. `at` itself
 * when it has no rate limit or room now. Pure.
 *
 * **Example** (2 per second, started at 0 and 400)
 *
 * ```ts
 * import { Rules } from "@tickwork/core"
 * const limit = { concurrency: Infinity, rateMax: 2, ratePerMs: 1000 }
 * Rules.rateOpensAt(limit, [0, 400], 500) // 1000
 * Rules.rateOpensAt(limit, [0, 400], 1200) // 1200
 * ```
 *
 * @category combinators
 * @since 0.7.0
 */
export const rateOpensAt = (
  limit: ResolvedLimit,
  starts: ReadonlyArray<number>,
  at: number,
): number => {
  if (limit.rateMax === Number.POSITIVE_INFINITY || starts.length < limit.rateMax) return at
  // The start `rateMax` back from the newest leaves the window `per` after it.
  const oldest = starts[starts.length - limit.rateMax] as number
  return Math.max(at, oldest + limit.ratePerMs)
}

/**
 * Whether a due run of a task in `scopes` may start at `at` (SPEC §20): `Start`, or `Wait` with
 * its cause and the index of the scope that holds it — `concurrency` for the first scope with
 * `running >= concurrency` (it waits for a run of that scope to end), else `rate-limited` for the
 * scope whose window opens last, with `until`, when it does (the run is taken again then). A
 * concurrency wait is decided first: it waits for an event, a rate wait only for time. Pure.
 *
 * @category combinators
 * @since 0.7.0
 */
export const admit = (scopes: ReadonlyArray<ScopeLoad>, at: number): Admission => {
  for (let k = 0; k < scopes.length; k++) {
    const s = scopes[k] as ScopeLoad
    if (s.running >= s.limit.concurrency) return { _tag: "Wait", cause: "concurrency", scope: k }
  }
  let until = at
  let scope = -1
  for (let k = 0; k < scopes.length; k++) {
    const s = scopes[k] as ScopeLoad
    const opens = rateOpensAt(s.limit, s.starts, at)
    if (opens > until) {
      until = opens
      scope = k
    }
  }
  return scope < 0 ? START : { _tag: "Wait", cause: "rate-limited", scope, until }
}

/**
 * The decision of {@link admit}.
 *
 * @category models
 * @since 0.7.0
 */
export type Admission =
  | { readonly _tag: "Start" }
  | { readonly _tag: "Wait"; readonly cause: "concurrency"; readonly scope: number }
  | {
      readonly _tag: "Wait"
      readonly cause: "rate-limited"
      readonly scope: number
      readonly until: number
    }

const START: Admission = { _tag: "Start" }
