/**
 * @internal
 * A task's ledger with its kept results typed by the handler given (SPEC §19.3): `ledger`
 * decodes a result by the handler registered under the task's handler name and gives it as
 * `unknown`; here the caller names the handler, so the value has its result type.
 */
import { Errors as CoreErrors } from "@tickwork/core"
import { Effect, Option } from "effect"
import type { StoreError } from "../Errors.ts"
import type * as Handler from "../Handler.ts"
import type { TaskStoreShape } from "../TaskStore.ts"
import * as Ledger from "./ledger.ts"
import * as KeptResult from "./result.ts"
import type {
  DurableLedgerRead,
  DurableOccurrence,
  DurableSchedulerShape,
  Ran,
} from "./scheduler.ts"

/**
 * A run of a typed ledger: `value` is its kept result decoded by the handler's `result` schema,
 * of that schema's type; `undefined` when none was kept or the schema no longer decodes the
 * stored text (`result` still holds it).
 *
 * @category models
 * @since 0.7.0
 */
export interface TypedRan<O> extends Omit<Ran, "value"> {
  readonly value: O | undefined
}

/**
 * A record of a typed ledger: a {@link TypedRan}, or an event as `ledger` gives it.
 *
 * @category models
 * @since 0.7.0
 */
export type TypedOccurrence<O> = TypedRan<O> | Exclude<DurableOccurrence, Ran>

/**
 * Task `id`'s ledger (of `options.generation` only when given), oldest first, each run's kept
 * result decoded by `handler`'s `result` schema. A handler with no `result` schema, or not the
 * one the task runs (by name, while its row is stored), is an `InvalidOption` naming `handler`
 * with the name given, and nothing is read further.
 */
export const ledgerOf = <A, E, R, O>(
  durable: DurableSchedulerShape,
  handler: Handler.Handler<A, E, R, O>,
  id: string,
  options?: { readonly generation: number },
): Effect.Effect<ReadonlyArray<TypedOccurrence<O>>, StoreError | CoreErrors.InvalidOption> =>
  Effect.gen(function* () {
    const refuse = (message: string) =>
      new CoreErrors.InvalidOption({ field: "handler", value: handler.name, message })
    if (handler.result === undefined) {
      return yield* Effect.fail(
        refuse(`handler "${handler.name}" keeps no result: it was made without a result schema`),
      )
    }
    const info = yield* durable.info(id)
    if (Option.isSome(info) && info.value.handler !== handler.name) {
      return yield* Effect.fail(
        refuse(
          `task ${JSON.stringify(id)} runs handler "${info.value.handler}", not "${handler.name}"`,
        ),
      )
    }
    const entries =
      options === undefined ? yield* durable.ledger(id) : yield* durable.ledger(id, options)
    return entries.map((o): TypedOccurrence<O> => {
      if (o.kind !== "ran") return o
      const value =
        typeof o.result === "string"
          ? (KeptResult.decode(handler as Handler.Any, o.result) as O | undefined)
          : undefined
      return { ...o, value }
    })
  })

/**
 * `ledger` of the scheduler: task `id`'s runs and events merged in order (of one generation when
 * asked), each kept result decoded by the schema of the handler registered under the task's
 * handler name (`unknown`). A `generation` that is not a positive integer is an
 * `InvalidOption` naming it, and nothing is read.
 */
export const read = (
  store: TaskStoreShape,
  handlers: ReadonlyMap<string, Handler.Any>,
): DurableLedgerRead =>
  ((id: string, given?: { readonly generation: number }) => {
    // Only an object is a read option: `Effect.forEach(ids, d.ledger)` passes an index.
    const read = typeof given === "object" && given !== null ? given : undefined
    const generation = read?.generation
    if (
      read !== undefined &&
      (typeof generation !== "number" || !Number.isSafeInteger(generation) || generation < 1)
    ) {
      return Effect.fail(
        new CoreErrors.InvalidOption({
          field: "generation",
          value: generation,
          message: `generation must be a positive integer, got ${String(generation)}`,
        }),
      )
    }
    return Effect.gen(function* () {
      const [runs, events] = yield* Effect.all([store.runs(id), store.events(id)])
      const all = Ledger.merge(runs, events)
      const merged = generation === undefined ? all : all.filter((o) => o.generation === generation)
      if (!runs.some((r) => typeof r.result === "string")) return merged
      // Kept results decode by the schema of the task's handler, when registered here.
      const row = yield* store.get(id)
      const handler = Option.isSome(row) ? handlers.get(row.value.handler) : undefined
      return merged.map((o) =>
        o.kind === "ran" && typeof o.result === "string"
          ? { ...o, value: KeptResult.decode(handler, o.result) }
          : o,
      )
    })
  }) as DurableLedgerRead
