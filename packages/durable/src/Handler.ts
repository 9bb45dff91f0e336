/**
 * Named handlers: the jobs of durable tasks. A closure cannot survive a restart, so a durable
 * task names its handler and carries a payload; the handler is registered, under the same name,
 * with every process that runs the store's tasks.
 *
 * A handler is a name, an Effect `Schema` for its payload, and a function from the decoded
 * payload and the run's {@link DurableRun} to an Effect. The payload is encoded with the schema
 * when a task is scheduled (a payload the schema rejects is a typed error, and nothing is
 * written) and decoded before every run.
 *
 * **Example** (A handler that sends a reminder, idempotent on the run's key)
 *
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Handler } from "@tickwork/durable"
 *
 * const remind = Handler.make(
 *   "reminder.send",
 *   Schema.Struct({ userId: Schema.String, text: Schema.String }),
 *   (payload, run) => Effect.log(`remind ${payload.userId}: ${payload.text} (key ${run.key})`),
 * )
 * ```
 *
 * @since 0.1.0
 */
import type { Task } from "@tickwork/core"
import type { Effect, Schema } from "effect"

/**
 * What a handler is told about its run: the runtime's run info plus what at-least-once
 * delivery needs. `(id, slot)` — the {@link DurableRun.key} — is the same for every delivery of
 * an occurrence, retries included, so a handler can make its side effect idempotent on it.
 *
 * @category models
 * @since 0.1.0
 */
export interface DurableRun extends Task.RunInfo {
  /** The grid slot this run belongs to (a retry keeps its slot), epoch ms. */
  readonly slot: number
  /** `"<id>@<slot>"`: the idempotency key of this occurrence. */
  readonly key: string
  /**
   * 1 for the first delivery of this (slot, attempt); more when it is run again because a
   * process died or lost its lease while running it (its side effect may already have happened).
   */
  readonly delivery: number
  /** The fencing token of this delivery: a later delivery of the same task has a larger one. */
  readonly fence: number
  /** The handler's name. */
  readonly handler: string
  /**
   * When this delivery's claim was issued, epoch ms (the store's clock reading the claim used):
   * its lease, and its fence, date from no earlier than this.
   */
  readonly claimedAt: number
}

/**
 * A named handler whose payload has type `A`, failing with `E` and needing services `R`.
 *
 * @category models
 * @since 0.1.0
 */
export interface Handler<A, E = never, R = never, O = unknown> {
  readonly name: string
  /** Encodes the payload to JSON-safe data when scheduling; decodes it before each run. */
  readonly payload: Schema.Codec<A, unknown>
  readonly run: (payload: A, run: DurableRun) => Effect.Effect<O, E, R>
  /**
   * Encodes the run's value to JSON-safe data, kept with its ledger entry; decodes it when the
   * ledger is read. Absent: the value is not kept.
   */
  readonly result?: Schema.Codec<O, unknown> | undefined
}

/**
 * The options of {@link make}.
 *
 * @category models
 * @since 0.5.0
 */
export interface HandlerOptions<O, OI> {
  /** The schema of the value a run succeeds with: see {@link Handler.result}. */
  readonly result: Schema.Codec<O, OI>
}

/**
 * Any handler.
 *
 * @category models
 * @since 0.1.0
 */
// biome-ignore lint/suspicious/noExplicitAny: the payload and result types are invariant (schema and job)
export type Any = Handler<any, unknown, unknown, any>

/**
 * The services a list of handlers needs.
 *
 * @category models
 * @since 0.1.0
 */
export type Services<H extends Any> =
  H extends Handler<infer _A, infer _E, infer R, infer _O> ? R : never

/**
 * The payload type of a handler (`unknown` for a handler named by a string).
 *
 * @category models
 * @since 0.1.0
 */
export type PayloadOf<H> = H extends Handler<infer A, infer _E, infer _R, infer _O> ? A : unknown

/**
 * A handler named `name`, with its payload schema and its job; with `options.result`, the value
 * its job succeeds with is kept (see {@link Handler.result}).
 *
 * @category constructors
 * @since 0.1.0
 */
export function make<A, I, E = never, R = never>(
  name: string,
  payload: Schema.Codec<A, I>,
  run: (payload: A, run: DurableRun) => Effect.Effect<unknown, E, R>,
): Handler<A, E, R>
/**
 * A handler whose run's value is kept, encoded by `options.result` (SPEC §19.3).
 *
 * @category constructors
 * @since 0.5.0
 */
export function make<A, I, O, OI, E = never, R = never>(
  name: string,
  payload: Schema.Codec<A, I>,
  run: (payload: A, run: DurableRun) => Effect.Effect<O, E, R>,
  options: HandlerOptions<O, OI>,
): Handler<A, E, R, O>
/**
 * The implementation of both signatures above.
 *
 * @category constructors
 * @since 0.1.0
 */
export function make<A, I, O, OI, E, R>(
  name: string,
  payload: Schema.Codec<A, I>,
  run: (payload: A, run: DurableRun) => Effect.Effect<O, E, R>,
  options?: HandlerOptions<O, OI>,
): Handler<A, E, R, O> {
  return options?.result === undefined
    ? { name, payload, run }
    : { name, payload, run, result: options.result }
}
