/**
 * @internal
 * The dispatcher: one fiber that sleeps until the store's earliest due time (a local timer,
 * woken by this process's inserts and completions) or a short poll (other processes' inserts),
 * then claims due rows — as many as it has free workers — and starts each on the worker pool.
 * A grid task's late first delivery is first decided by the core's take-time rule
 * (`Rules.take`: the catch-up window, `coalesce`); a row it moves goes back to the store at its
 * new slot and is claimed again in its turn.
 */
import { Rules, type Task } from "@tickwork/core"
import { MAX_SLEEP_MS } from "@tickwork/runtime/Wakeup"
import { Cause, type Context, Effect, Exit } from "effect"
import type * as Handler from "../Handler.ts"
import type { Change, TaskRow } from "../TaskStore.ts"
import type { Env } from "./env.ts"
import * as Events from "./events.ts"
import type { Held } from "./held.ts"
import * as Payload from "./payload.ts"
import * as KeptResult from "./result.ts"
import * as Rows from "./rows.ts"

/** The longest single sleep: Node timers overflow above 2^31-1 ms (the runtime's bound). */
export { MAX_SLEEP_MS }

/**
 * Claims held per worker at most. A run that ended keeps its claim until its completion commits
 * (a transaction: milliseconds, more under load), but its worker is free at once: counting it
 * against the workers left each worker idle for that long after every run, which at 1k runs/s
 * on two processes was the difference between keeping up and a queue (pickup p50 22 ms).
 * Twice the workers bounds the claims a process holds while its commits are slow or failing.
 */
export const HELD_PER_WORKER = 2

/** Rows the dispatcher may claim now: as many as free workers, within the held bound. */
const claimable = (env: Env): number =>
  env.session.held
    ? Math.min(env.pool.free, HELD_PER_WORKER * env.options.workers - env.held.size)
    : 0

/**
 * Core's take plan (`Rules.takePlan`, SPEC §3) for a claimed row: `undefined` to run it as it is
 * (a retry, a re-delivery after a crash, a row on time), or the change that moves it first.
 */
const moveOf = (env: Env, row: TaskRow, at: number): Change | undefined => {
  // A re-delivery (after a crash, a lost lease) was decided at its first delivery. The plan
  // itself applies a grid's window and `coalesce` to first attempts only. A row on time is asked
  // too: a one-shot's retry due after its deadline expires at its due time (SPEC §3).
  if (row.deliveries !== 1) return undefined
  const plan = Rules.takePlan(Rows.view(row, env.options.windowMs), at)
  if (plan._tag === "Start") return undefined
  if (plan._tag === "Expire") {
    // A one-shot past its deadline (its own window, SPEC §3): it does not run, it ends failed.
    const expired = {
      update: Rows.expired(row, at, plan.deadline),
      events: [
        Events.make("expired", row, at, env.owner, {
          detail: `attempt ${row.attempt} due at ${row.runAt}; deadline ${plan.deadline}`,
        }),
      ],
    }
    return {
      id: row.id,
      fence: row.fence,
      ...expired,
      // With a breaker, the commit has it leave (a probe that expired is replaced).
      redecide: (fresh) => ({
        ...expired,
        update: Rows.expired(fresh, at, plan.deadline),
        leaves: true,
      }),
      fencedOut: Events.make("fenced-out", row, at, env.owner, {
        detail: "claim-time decision",
      }),
    }
  }
  // One event per step of the plan: a window skip or a coalesce, with its cause.
  const events = plan.steps.map((step) =>
    step._tag === "Skip"
      ? Events.window(step.skipped, row, env.owner, at, env.options.windowMs)
      : Events.coalesced(step.merged, row, env.owner, at, step.slot),
  )
  return {
    id: row.id,
    fence: row.fence,
    update: Rows.moved(row, plan.slot, at, env.nextSeq()),
    events,
    fencedOut: Events.make("fenced-out", row, at, env.owner, { detail: "claim-time decision" }),
  }
}

/** Starts a claimed row's run on the pool (a worker is free: the claim asked for no more). */
const start = (
  env: Env,
  context: Context.Context<never>,
  row: TaskRow,
  claimedAt: number,
  claimedAtEpoch: number,
) =>
  Effect.gen(function* () {
    const handler = env.options.handlers.get(row.handler) as Handler.Any
    const previous = env.held.ofTask(row.id)
    if (previous !== undefined && !previous.finished) {
      // Our own lease on it expired and we claimed it again: the old run is fenced out.
      previous.lost = true
      yield* env.pool.interrupt((t) => t === previous)
    }
    const runNumber = Rules.start(Rows.view(row, env.options.windowMs)).runNumber
    const h = env.held.add(row, runNumber, claimedAt)
    const startedAt = env.now()
    h.startedAt = startedAt
    const run: Handler.DurableRun = {
      id: row.id as Task.TaskId,
      generation: row.generation,
      slot: row.slot,
      scheduledFor: row.runAt,
      startedAt,
      attempt: row.attempt,
      runNumber,
      tags: row.tags,
      key: `${row.id}@${row.slot}`,
      delivery: row.deliveries,
      fence: row.fence,
      handler: row.handler,
      claimedAt: claimedAtEpoch,
      // SPEC §19.1: a run a trigger asked for; absent for every other run.
      ...(row.kept === undefined ? {} : { manual: true }),
    }
    const job = Effect.suspend(() => {
      // A lease that lapsed before the run began: it is not ours to run. Nor is a claim whose
      // process has lost its database session since: it goes back under its fence, if still ours.
      if (!h.lost && !env.session.held) {
        h.lost = true
        h.releasing = true
      }
      if (h.lost) return Effect.interrupt
      h.started = true
      env.progress.lastStartedAt = env.now()
      return Effect.flatMap(Payload.decode(handler, row.id, row.payload), (payload) =>
        // Encoded here, on the run's worker: the commit only writes the text (SPEC §19.3).
        Effect.map(handler.run(payload, run), (value) =>
          KeptResult.encode(handler, row.id, value, env.options.maxResultBytes),
        ),
      )
    })
    env.pool.start(h, run, {
      job: job as Effect.Effect<unknown, unknown, unknown>,
      context,
      timeoutMs: row.timeoutMs > 0 ? row.timeoutMs : env.options.defaultTimeoutMs,
      link: undefined,
    })
  })

/** Claim-time decisions first (moved rows go back to the store), then the rest start. */
const startAll = (
  env: Env,
  context: Context.Context<never>,
  rows: ReadonlyArray<TaskRow>,
  at: number,
  claimedAt: number,
) =>
  Effect.gen(function* () {
    const moves: Array<Change> = []
    const moved: Array<TaskRow> = []
    const toStart: Array<TaskRow> = []
    for (const row of rows) {
      const move = moveOf(env, row, at)
      if (move === undefined) toStart.push(row)
      else {
        moves.push(move)
        moved.push(row)
      }
    }
    if (moves.length > 0) {
      const committed = yield* env.store.commit(moves, { seq: env.nextSeq, owner: env.owner })
      for (let k = 0; k < moves.length; k++) {
        if (committed.results[k] === "applied") {
          const handler = moved[k]?.handler
          for (const e of committed.decided[k]?.events ?? []) env.publish(e, handler)
        }
      }
      // A breaker whose probe expired let another held task through.
      for (const e of committed.events) env.publish(e)
      // A moved row may be due at once: claim again before sleeping.
      env.wakeup.wake()
    }
    for (const row of toStart) yield* start(env, context, row, claimedAt, at)
  })

/** The run order the store claims in is SPEC §4's; the pool starts them in that order. */
const dispatchLoop = (
  env: Env,
  context: Context.Context<never>,
  dropLapsed: Effect.Effect<void>,
  stopping: () => boolean,
) =>
  Effect.gen(function* () {
    const { store, options, wakeup } = env
    /** When the earliest open breaker goes half-open (as last read), epoch ms. */
    let halfOpenAt = Number.NEGATIVE_INFINITY
    /** When the store's next times were last read (`nextTimes`), epoch ms; -Infinity: never. */
    let timesReadAt = Number.NEGATIVE_INFINITY
    for (;;) {
      if (stopping()) return
      // A run that ends while this pass works is seen by its next look at the free workers.
      env.dispatch.wantsWorker = false
      // First, after any wake (a stall included): runs whose lease lapsed stop here.
      yield* dropLapsed
      const t = env.now()
      if (t >= halfOpenAt) {
        // Breakers whose cool-down ended let their probe through before anything is claimed.
        const events = yield* store.halfOpen(t, { seq: env.nextSeq, owner: env.owner })
        for (const e of events) env.publish(e)
        halfOpenAt = Number.POSITIVE_INFINITY
      }
      // Without its database session this process cannot prove what it claims is its own.
      const free = claimable(env)
      let full = false
      if (free > 0) {
        const limit = Math.min(free, options.claimBatch)
        const claimedAt = env.mono()
        const rows = yield* store.claim({
          owner: env.owner,
          now: t,
          limit,
          leaseMs: options.leaseMs,
          handlers: options.names,
          whileSessionHeld: store.session !== undefined,
          limits: options.limits,
        })
        yield* env.outage.worked
        if (rows.length > 0) yield* startAll(env, context, rows, t, claimedAt)
        full = rows.length === limit
      }
      if (full) {
        yield* Effect.yieldNow
        continue
      }
      // No worker was free for the claim and one is now (a run ended meanwhile): claim at once.
      if (free <= 0 && claimable(env) > 0) continue
      // From here on, any insert wakes us (it may be earlier than what nextDue sees).
      wakeup.wakeBefore = Number.POSITIVE_INFINITY
      let wait = MAX_SLEEP_MS
      // One round trip: a wake that comes while it is on the way is kept for the park. With a
      // worker free, everything due was claimed (a full claim loops above) and it sleeps toward
      // the next due time: a run's end need not wake it. With none, only a run's end does (or a
      // commit: the held bound).
      const workerFree = claimable(env) > 0
      env.dispatch.wantsWorker = !workerFree
      // With no worker free, the read would only tell the breakers' half-open time (nothing due
      // can be claimed), and a run that ends meanwhile would wait for its round trip before its
      // worker is given work: on a saturated shared store, one round trip more per run. So a
      // process with a poll (a shared store) parks at once when it read the times less than a
      // poll ago; a breaker opened since is seen at most a poll late, as one opened by another
      // process is. An exclusive store has no poll and no round trip to save: it always reads.
      const fresh =
        !workerFree && Number.isFinite(options.pollMs) && t - timesReadAt < options.pollMs
      if (!fresh) {
        const next = yield* store.nextTimes(workerFree ? options.names : [])
        timesReadAt = t
        // Due but not claimed: rows another process is claiming right now. Rows waiting on a
        // limit are not in `due` (SPEC §20): a rate wait's end is (`until`), a concurrency wait
        // is woken by a run of its scope ending (here, or another process's notice) or by the
        // poll.
        if (next.due !== undefined) wait = Math.max(1, next.due - t)
        // An open breaker's half-open time is a due time too (SPEC §7): its probe runs then.
        halfOpenAt = next.halfOpen ?? Number.POSITIVE_INFINITY
      }
      if (halfOpenAt < Number.POSITIVE_INFINITY) wait = Math.min(wait, Math.max(1, halfOpenAt - t))
      wait = Math.min(wait, options.pollMs)
      // A wake that came since it set +Infinity (on the way to nextTimes) returns at once. A wake
      // sets wakeBefore back to -Infinity itself; a timer that ends does not.
      wakeup.wakeBefore = t + wait
      yield* wakeup.wait(wait)
      wakeup.wakeBefore = Number.NEGATIVE_INFINITY
    }
  })

/**
 * The dispatcher fiber: a failing store (or a bug) never stops it; it says so and tries again.
 * Runs until `stopping()` holds.
 */
export const dispatcher = (
  env: Env,
  context: Context.Context<never>,
  dropLapsed: Effect.Effect<void>,
  stopping: () => boolean,
): Effect.Effect<void> =>
  Effect.gen(function* () {
    while (!stopping()) {
      const exit = yield* Effect.exit(dispatchLoop(env, context, dropLapsed, stopping))
      if (Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause)) {
        env.wakeup.wakeBefore = Number.NEGATIVE_INFINITY
        yield* env.outage.report("claiming", exit.cause)
        yield* env.wakeup.wait(1_000)
      }
    }
  })

/** Interrupts the run of `h` on the pool (if it is still running) and waits for its end. */
export const interrupt = (env: Env, h: Held): Effect.Effect<number> =>
  env.pool.interrupt((t) => t === h)
