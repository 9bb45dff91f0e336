/**
 * `FLEET_LEGS=1`: timestamps of a tickwork worker's pickup path, printed beside the worker's
 * start/end lines, for the part's leg breakdown (`legs.ts`). Off by default: nothing here runs
 * unless the worker asks for it. Every time is epoch ms at µs resolution
 * (`performance.timeOrigin + performance.now()`, the same reading the part takes for inserts).
 *
 * Taken from outside the scheduler, so the library carries no bench code:
 * - `n <at>`: a notice (`NOTIFY`) was taken off this process's session connection — the store's
 *   `session` is wrapped and its notices pass through one forwarding fiber on the way;
 * - `w <at> <why>`: the dispatcher's wait returned, `wake` (a wake came: a notice, a run's end,
 *   an insert of this process) or `timer` (its poll or a due time) — `Wakeup.prototype.wait` is
 *   wrapped, for the one wake-up whose wait follows the store's `nextTimes` (the dispatcher's);
 * - `c <sent> <returned> <limit> <keys>`: a claim statement was sent and answered, with the most
 *   rows it asked for (the free workers, at most `claimBatch`) and the ids it took
 *   (comma-separated; `-` for none);
 * - `p <at> <free>`: the dispatcher parks; `free` is 1 when it had a worker free (it read the
 *   next times for its handlers just before), 0 when it parks for one (the pool or the
 *   held-claims bound is full: it asked `nextTimes` for no handler, or did not ask);
 * - `t <at>`: the dispatcher's `nextTimes` answered (a round trip before a park);
 * - `k <sent> <returned> <rows>`: a commit (the completer's batch of ended runs);
 * - `r <k> <at>`: the handler of job k began (its run started on the worker pool).
 */
import { TaskStore } from "@tickwork/durable"
import { Wakeup } from "@tickwork/runtime/Wakeup"
import { Effect, Layer, Queue } from "effect"

/** Whether this process records the legs. */
export const enabled = process.env.FLEET_LEGS === "1"

/** Epoch ms, µs resolution: comparable across the processes of one machine. */
export const hiNow = (): number => performance.timeOrigin + performance.now()

const out = (line: string) => process.stdout.write(`${line}\n`)
const at = (t: number) => t.toFixed(3)

/** Job k's handler began. */
export const ran = (k: string) => {
  if (enabled) out(`r ${k} ${at(hiNow())}`)
}

/** Set by `nextTimes`' answer: the next `Wakeup.wait` is the dispatcher's park. */
let parking = false
/** Whether `nextTimes` was asked for handlers (a worker free) since the dispatcher last parked. */
let readForWorker = false
/** The dispatcher's wake-up, once recognized (the first wait after a `nextTimes`). */
let dispatcherWakeup: Wakeup | undefined
/** Per wake-up: a wake came since its last wait began. */
const woken = new WeakSet<Wakeup>()

const patchWakeup = () => {
  const wait = Wakeup.prototype.wait
  const wake = Wakeup.prototype.wake
  Wakeup.prototype.wake = function (this: Wakeup) {
    woken.add(this)
    wake.call(this)
  }
  Wakeup.prototype.wait = function (this: Wakeup, ms?: number) {
    if (parking && dispatcherWakeup === undefined) dispatcherWakeup = this
    parking = false
    if (this !== dispatcherWakeup) return wait.call(this, ms)
    out(`p ${at(hiNow())} ${readForWorker ? 1 : 0}`)
    readForWorker = false
    // A wake pending from before the wait also ends it at once: it counts as a wake.
    return Effect.suspend(() =>
      wait.call(this, ms).pipe(
        Effect.tap(() =>
          Effect.sync(() => {
            out(`w ${at(hiNow())} ${woken.has(this) ? "wake" : "timer"}`)
            woken.delete(this)
          }),
        ),
      ),
    )
  }
}

const wrap = (store: TaskStore.TaskStoreShape): TaskStore.TaskStoreShape => {
  const session = store.session
  return {
    ...store,
    claim: (o) =>
      Effect.suspend(() => {
        const sent = hiNow()
        return Effect.tap(store.claim(o), (rows) =>
          Effect.sync(() =>
            out(
              `c ${at(sent)} ${at(hiNow())} ${o.limit} ${rows.length === 0 ? "-" : rows.map((r) => r.id).join(",")}`,
            ),
          ),
        )
      }),
    commit: (changes, options) =>
      Effect.suspend(() => {
        const sent = hiNow()
        return Effect.tap(store.commit(changes, options), () =>
          Effect.sync(() => out(`k ${at(sent)} ${at(hiNow())} ${changes.length}`)),
        )
      }),
    nextTimes: (handlers) =>
      Effect.tap(store.nextTimes(handlers), () =>
        Effect.sync(() => {
          parking = true
          // The dispatcher asks for no handler's times when no worker is free.
          readForWorker = handlers.length > 0
          out(`t ${at(hiNow())}`)
        }),
      ),
    ...(session === undefined
      ? {}
      : {
          session: (owner: string) =>
            Effect.gen(function* () {
              const s = yield* session(owner)
              const forwarded = yield* Queue.unbounded<unknown, unknown>()
              yield* Effect.forkScoped(
                Effect.forever(
                  Effect.gen(function* () {
                    const notice = yield* Queue.take(s.notices)
                    out(`n ${at(hiNow())}`)
                    yield* Queue.offer(forwarded, notice)
                  }),
                ).pipe(Effect.catchCause((cause) => Queue.failCause(forwarded, cause))),
              )
              return { ...s, notices: forwarded }
            }),
        }),
  }
}

/**
 * The store layer a worker gives its scheduler: `store` itself, or (`FLEET_LEGS=1`) the same
 * store with its claim, `nextTimes` and session notices timed, and the dispatcher's wake-up too.
 */
export const probed = <E, R>(
  store: Layer.Layer<TaskStore.TaskStore, E, R>,
): Layer.Layer<TaskStore.TaskStore, E, R> => {
  if (!enabled) return store
  patchWakeup()
  return Layer.effect(
    TaskStore.TaskStore,
    Effect.gen(function* () {
      return wrap(yield* TaskStore.TaskStore)
    }),
  ).pipe(Layer.provide(store))
}
