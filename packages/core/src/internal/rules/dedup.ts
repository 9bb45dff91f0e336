/**
 * @internal
 * Deduplication keys (SPEC §20.3): what a new schedule under a key does, given the key's holder,
 * as one pure function over plain data, so the in-memory kernel and a store that reads the
 * holder's row with SQL decide alike. Re-exported by `Rules.ts`.
 */
import { type InvalidOption, show, unknownKey } from "../../Errors.ts"
import * as Options from "../../Options.ts"
import type { TaskId, TaskState } from "../../Task.ts"
import type { DurationInput } from "../../Time.ts"
import { MAX_KEY_LENGTH } from "./limits.ts"

/**
 * How a key deduplicates (SPEC §20.3):
 * - `"singleton"`: while the key's holder is live (`scheduled`, `running` or `paused`), a new
 *   schedule under the key creates nothing and returns the holder's id;
 * - `"debounce"`: while the holder is pending (`scheduled` or `paused`), a new schedule replaces
 *   it in place (its job, its slot from the new schedule, the other options the request gives);
 *   a running holder is left to finish and the request creates the key's new holder;
 * - `"throttle"`: at most one task is created under the key per `window`, counted from the
 *   holder's acceptance; a request inside the window creates nothing and returns the holder's id.
 *
 * @category models
 * @since 0.7.0
 */
export type DedupMode = "singleton" | "debounce" | "throttle"

/**
 * A task's deduplication key (SPEC §20.3), the `dedup` task option: `key` (1–256 characters),
 * `mode` (default `"singleton"`) and, for `"throttle"` only, `window` (ms or an Effect
 * `Duration` input, positive).
 *
 * @category models
 * @since 0.7.0
 */
export interface Dedup {
  readonly key: string
  readonly mode?: DedupMode | undefined
  readonly window?: DurationInput | undefined
}

/**
 * A {@link Dedup} checked: `windowMs` is the throttle window in ms (0 for the other modes).
 *
 * @category models
 * @since 0.7.0
 */
export interface ResolvedDedup {
  readonly key: string
  readonly mode: DedupMode
  readonly windowMs: number
}

/**
 * The key's holder as a store finds it: the last task created under the key, its state now
 * (`"unknown"` once it is no longer kept) and when it was accepted (epoch ms).
 *
 * @category models
 * @since 0.7.0
 */
export interface KeyHolder {
  readonly id: TaskId
  readonly state: TaskState | "unknown"
  readonly acceptedAt: number
}

/**
 * What a schedule under a key does (SPEC §20.3): `created` (a new task, the key's new holder),
 * `deduplicated` (nothing created; `id` is the holder's) or `replaced` (the pending holder `id`
 * takes the new request in place).
 *
 * @category models
 * @since 0.7.0
 */
export type DedupDecision =
  | { readonly outcome: "created" }
  | { readonly outcome: "deduplicated"; readonly id: TaskId }
  | { readonly outcome: "replaced"; readonly id: TaskId }

const CREATED: DedupDecision = { outcome: "created" }
const dedupKeys: ReadonlySet<string> = new Set(["key", "mode", "window"])
const modes: ReadonlyArray<DedupMode> = ["singleton", "debounce", "throttle"]

/**
 * Checks the `dedup` option: the typed error of the first bad value (naming `dedup`,
 * `dedup.key`, `dedup.mode` or `dedup.window` and the value), or the option resolved. A
 * `window` is required for `"throttle"` and refused for the other modes. Pure.
 *
 * **Example** (One sync per customer in any ten seconds)
 *
 * ```ts
 * import { Rules } from "@tickwork/core"
 * const d = Rules.resolveDedup({ key: "sync:42", mode: "throttle", window: "10 seconds" })
 * "windowMs" in d && d.windowMs // 10000
 * ```
 *
 * @category constructors
 * @since 0.7.0
 */
export const resolveDedup = (dedup: unknown): ResolvedDedup | InvalidOption => {
  if (typeof dedup !== "object" || dedup === null || Array.isArray(dedup)) {
    return Options.invalid("dedup", dedup, "must be an object { key, mode?, window? }")
  }
  const unknown = unknownKey(dedup, dedupKeys, "dedup.")
  if (unknown !== undefined) return unknown
  const d = dedup as Dedup
  if (typeof d.key !== "string" || d.key.length === 0 || d.key.length > MAX_KEY_LENGTH) {
    return Options.invalid(
      "dedup.key",
      d.key,
      `must be a string of 1 to ${MAX_KEY_LENGTH} characters`,
    )
  }
  const mode = d.mode ?? "singleton"
  if (!modes.includes(mode)) {
    return Options.invalid("dedup.mode", d.mode, `must be one of ${modes.map(show).join(", ")}`)
  }
  if (mode !== "throttle") {
    if (d.window !== undefined) {
      return Options.invalid(
        "dedup.window",
        d.window,
        `is only for mode "throttle", not ${show(mode)}`,
      )
    }
    return { key: d.key, mode, windowMs: 0 }
  }
  if (d.window === undefined)
    return Options.invalid("dedup.window", d.window, 'is required for mode "throttle"')
  const windowMs = Options.millis("dedup.window", d.window, 0, true)
  if (typeof windowMs !== "number") return windowMs
  return { key: d.key, mode, windowMs }
}

/**
 * Decides a new schedule under a key (SPEC §20.3) from the request's resolved `dedup`, the key's
 * `holder` (`undefined`: no task was created under it, or the store forgot it) and `now`.
 * Pure; a store applies the decision in the same step (or transaction) as it read the holder.
 *
 * **Example** (A debounced request replaces the pending holder)
 *
 * ```ts
 * import { Rules, type Task } from "@tickwork/core"
 * const holder = { id: "sync" as Task.TaskId, state: "scheduled" as const, acceptedAt: 0 }
 * Rules.decideDedup({ key: "k", mode: "debounce", windowMs: 0 }, holder, 5).outcome // "replaced"
 * ```
 *
 * @category constructors
 * @since 0.7.0
 */
export const decideDedup = (
  request: ResolvedDedup,
  holder: KeyHolder | undefined,
  now: number,
): DedupDecision => {
  if (holder === undefined) return CREATED
  const s = holder.state
  switch (request.mode) {
    case "singleton":
      return s === "scheduled" || s === "running" || s === "paused"
        ? { outcome: "deduplicated", id: holder.id }
        : CREATED
    case "debounce":
      return s === "scheduled" || s === "paused" ? { outcome: "replaced", id: holder.id } : CREATED
    case "throttle":
      // The window runs from the holder's acceptance, whatever has become of the holder since.
      return now < holder.acceptedAt + request.windowMs
        ? { outcome: "deduplicated", id: holder.id }
        : CREATED
  }
}
