/**
 * A bounded pool of run fibers: it runs Effect jobs the way SPEC §16 says a run behaves, and
 * reports each run's `Exit` (with its whole `Cause`) to one callback. It knows nothing of
 * schedules or tasks: the timing actor (and the durable store) decide what runs and what an
 * outcome means; the pool only runs.
 *
 * Each run:
 * - gets its own `Scope`, closed when the job ends, before its exit is reported;
 * - sees the services it was given plus {@link Run.CurrentRun}, and nothing of the fiber that
 *   scheduled it (span, log annotations): its span is a root span linked to the scheduling span;
 * - is interrupted after its timeout and then fails with {@link Run.RunTimedOut};
 * - logs a failure at Warning and a defect at Error (unless turned off).
 *
 * At most `workers` runs are in flight: {@link WorkerPool.start} is called only while
 * {@link WorkerPool.free} is positive. A run's fiber starts at once, so a job that finishes
 * synchronously reports before `start` returns.
 *
 * @since 0.1.0
 */
import type { Task } from "@tickwork/core"
import { Cause, Context, Effect, Exit, Fiber, References, Scope, type Tracer } from "effect"
import { CurrentRun, RunTimedOut } from "./Run.ts"

/**
 * A job for one run: an Effect, or a function from the run's info to one. The requirements are
 * met by {@link PoolJob.context}, plus a `Scope` and {@link CurrentRun} the pool provides.
 *
 * @category models
 * @since 0.1.0
 */
export type RunJob =
  | Effect.Effect<unknown, unknown, unknown>
  | ((run: Task.RunInfo) => Effect.Effect<unknown, unknown, unknown>)

/**
 * What the pool needs to run a job.
 *
 * @category models
 * @since 0.1.0
 */
export interface PoolJob {
  readonly job: RunJob
  /** The services the run sees (a `Scope` and `CurrentRun` are added per run). */
  readonly context: Context.Context<never>
  /** Interrupt the run after this many ms and report it `timed-out`; 0 = never. */
  readonly timeoutMs: number
  /** The span that scheduled the task: the run's root span links to it. */
  readonly link: Tracer.AnySpan | undefined
  /**
   * The bound, in bytes of JSON, of the run's value kept in the ledger (a task scheduled with
   * `keepResult: true`, SPEC §19.3); `undefined`: the ledger keeps no value.
   */
  readonly keepResult?: number | undefined
}

/**
 * Pool options.
 *
 * @category models
 * @since 0.1.0
 */
export interface PoolOptions<T> {
  /** Runs in flight at most (>= 1). */
  readonly workers: number
  /** A root span `tickwork.run` per run (~1 µs each). */
  readonly spans: boolean
  /** Annotate each run's logs with its task id, slot and attempt. */
  readonly logAnnotations: boolean
  /** Log a failed or timed-out run at Warning and a defect at Error. */
  readonly logFailures: boolean
  /** The clock a run's `finishedAt` is read from, epoch ms. */
  readonly now: () => number
  /**
   * Hears every run's end, in the order runs end, after its scope has closed. Called inside the
   * run fiber's last step, so it must be quick and must not throw.
   */
  readonly onEnd: (token: T, exit: Exit.Exit<unknown, unknown>, finishedAt: number) => void
}

/**
 * A bounded pool of run fibers; `T` is what the caller tags each run with (the kernel's run,
 * a durable claim) and gets back in `onEnd`.
 *
 * @category models
 * @since 0.1.0
 */
export class WorkerPool<T> {
  readonly workers: number
  private readonly options: PoolOptions<T>
  /** The run in each worker slot, or undefined when the slot is free. */
  private readonly tokens: Array<T | undefined>
  /** Each busy slot's fiber; undefined until `runForkWith` returns (the job may end first). */
  private readonly fibers: Array<Fiber.Fiber<unknown, unknown> | undefined>
  private readonly freeSlots: Array<number>
  /** Each busy slot's run scope, run info and context (its end closes the one, logs with the others). */
  private readonly scopes: Array<Scope.Closeable | undefined>
  private readonly runs: Array<Task.RunInfo | undefined>
  private readonly contexts: Array<Context.Context<never> | undefined>
  /**
   * Each job context with the run annotations laid over it (made once per job context; most
   * tasks share one), and the last one looked up (the common case skips the map).
   */
  private readonly annotated = new WeakMap<Context.Context<never>, Context.Context<never>>()
  private lastContext: Context.Context<never> | undefined
  private lastAnnotated: Context.Context<never> | undefined
  /** One exit observer per slot, made once. */
  private readonly observers: Array<(exit: Exit.Exit<unknown, unknown>) => void>

  constructor(options: PoolOptions<T>) {
    this.options = options
    this.workers = options.workers
    // Stryker disable next-line ArrayDeclaration: equivalent, each slot is written before it is read
    this.tokens = new Array(options.workers).fill(undefined)
    // Stryker disable next-line ArrayDeclaration: equivalent, each slot is written before it is read
    this.fibers = new Array(options.workers).fill(undefined)
    this.freeSlots = Array.from({ length: options.workers }, (_, k) => options.workers - 1 - k)
    this.scopes = new Array(options.workers).fill(undefined)
    this.runs = new Array(options.workers).fill(undefined)
    this.contexts = new Array(options.workers).fill(undefined)
    this.observers = Array.from(
      { length: options.workers },
      (_, slot) => (exit: Exit.Exit<unknown, unknown>) => this.ended(slot, exit),
    )
  }

  /**
   * A run's fiber has ended: its scope is closed — at once when nothing was added to it (most
   * runs), or by a fiber of its own running the finalizers — then it is logged and reported.
   * Closing here rather than with `Effect.onExit` inside the run saves two Effect nodes and a
   * closure per run; the order (scope closed, then logged, then reported) is the same.
   */
  private ended(slot: number, exit: Exit.Exit<unknown, unknown>): void {
    const scope = this.scopes[slot] as Scope.Closeable
    this.scopes[slot] = undefined
    const finalize = Scope.closeUnsafe(scope, exit)
    if (finalize === undefined) {
      this.report(slot, exit)
      return
    }
    const context = this.contexts[slot] as Context.Context<never>
    const fiber = Effect.runForkWith(context)(Effect.exit(Effect.uninterruptible(finalize)))
    // A shutdown's interrupt waits for the finalizers (they cannot be interrupted).
    this.fibers[slot] = fiber
    fiber.addObserver((closed) => {
      const finalizers = closed._tag === "Success" ? closed.value : closed
      this.report(
        slot,
        finalizers._tag === "Success"
          ? exit
          : Exit.failCause(
              exit._tag === "Success"
                ? finalizers.cause
                : Cause.combine(exit.cause, finalizers.cause),
            ),
      )
    })
  }

  /** Logs a failed run (unless its span's fiber did) and reports it; frees its slot. */
  private report(slot: number, exit: Exit.Exit<unknown, unknown>): void {
    const token = this.tokens[slot] as T
    const run = this.runs[slot] as Task.RunInfo
    const context = this.contexts[slot] as Context.Context<never>
    this.tokens[slot] = undefined
    this.fibers[slot] = undefined
    this.runs[slot] = undefined
    this.contexts[slot] = undefined
    this.freeSlots.push(slot)
    // Logged in a fiber with the run's services and annotations; a log is synchronous, so it
    // is written before the outcome is reported. With spans on, the run's fiber logged it
    // inside its span instead.
    if (exit._tag === "Failure" && this.options.logFailures && !this.options.spans) {
      Effect.runForkWith(context)(logFailure(run, exit.cause))
    }
    this.options.onEnd(token, exit, this.options.now())
  }

  /**
   * `context` with the run annotations laid over whatever annotations it carries: one object per
   * job context, whose task, slot and attempt fields read {@link CurrentRun} from the fiber that
   * reads them (see {@link runAnnotations}). O(1) after the first run of a job context.
   */
  private annotatedContext(context: Context.Context<never>): Context.Context<never> {
    if (context === this.lastContext) return this.lastAnnotated as Context.Context<never>
    let annotated = this.annotated.get(context)
    if (annotated === undefined) {
      const base = Context.getOrElse(context, References.CurrentLogAnnotations, noAnnotations)
      annotated = Context.addUnsafe(
        context,
        References.CurrentLogAnnotations.key,
        runAnnotations(base),
      )
      // Stryker disable next-line CallExpression: equivalent, a miss builds an equal object again
      this.annotated.set(context, annotated)
    }
    this.lastContext = context
    this.lastAnnotated = annotated
    return annotated
  }

  /** Worker slots free now. */
  get free(): number {
    return this.freeSlots.length
  }

  /** Runs in flight. */
  get inFlight(): number {
    return this.workers - this.freeSlots.length
  }

  /** The tokens of the runs in flight. O(workers). */
  running(): Array<T> {
    const out: Array<T> = []
    for (const token of this.tokens) if (token !== undefined) out.push(token)
    return out
  }

  /**
   * Starts a run on a free worker slot (call only while {@link free} > 0). Its fiber begins at
   * once; its end comes back through `onEnd`. A job function that throws is a defect.
   */
  start(token: T, run: Task.RunInfo, job: PoolJob): void {
    const o = this.options
    let effect: Effect.Effect<unknown, unknown, unknown>
    if (typeof job.job === "function") {
      try {
        effect = job.job(run)
      } catch (defect) {
        effect = Effect.die(defect)
      }
    } else {
      effect = job.job
    }
    // The run's context: the job's services (with the run annotations, made once per job
    // context) and two overlays of its own, its Scope and CurrentRun. Context.addUnsafe adds an
    // overlay (two small objects) instead of copying the map: a copy cost ~10× a whole fiber.
    const scope = Scope.makeUnsafe()
    const context = Context.addUnsafe(
      Context.addUnsafe(
        o.logAnnotations ? this.annotatedContext(job.context) : job.context,
        Scope.Scope.key,
        scope,
      ),
      CurrentRun.key,
      run,
    )
    // The scope closes when the fiber ends (see ended), before the exit is reported.
    if (job.timeoutMs > 0) {
      const afterMs = job.timeoutMs
      effect = Effect.timeoutOrElse(effect, {
        duration: afterMs,
        orElse: () => Effect.fail(new RunTimedOut(afterMs)),
      })
    }
    if (o.spans) {
      // Logged inside the span, so the log record carries it.
      if (o.logFailures) effect = Effect.tapCause(effect, (cause) => logFailure(run, cause))
      effect = effect.pipe(
        Effect.withSpan(
          "tickwork.run",
          {
            root: true,
            links: job.link === undefined ? [] : [{ span: job.link, attributes: {} }],
            attributes: {
              "tickwork.task": run.id,
              "tickwork.slot": run.slot,
              "tickwork.due": run.scheduledFor,
              "tickwork.attempt": run.attempt,
              "tickwork.run_number": run.runNumber,
              "tickwork.lateness_ms": run.startedAt - run.scheduledFor,
            },
          },
          // The stack would point into the pool, and capturing it costs ~4 µs per run.
          { captureStackTrace: false },
        ),
      )
    }
    const slot = this.freeSlots.pop() as number
    this.tokens[slot] = token
    this.scopes[slot] = scope
    this.runs[slot] = run
    this.contexts[slot] = context
    const fiber = Effect.runForkWith(context)(effect as Effect.Effect<unknown, unknown>)
    this.fibers[slot] = fiber
    // Called at once when the job has already ended (synchronously).
    fiber.addObserver(this.observers[slot] as (exit: Exit.Exit<unknown, unknown>) => void)
  }

  /**
   * Interrupts the runs whose token matches and waits until they have ended; returns how many.
   * A run interrupting itself (a job cancelling its own task with `interrupt`) is interrupted in
   * place: its fiber is the current one, possibly still inside {@link start}.
   */
  interrupt(matches: (token: T) => boolean): Effect.Effect<number> {
    return Effect.suspend(() => {
      const others: Array<Fiber.Fiber<unknown, unknown>> = []
      let self = false
      const current = Fiber.getCurrent()
      for (let k = 0; k < this.tokens.length; k++) {
        const token = this.tokens[k]
        if (token === undefined || !matches(token)) continue
        const fiber = this.fibers[k]
        // No fiber yet: the job is running synchronously inside start(), on the current fiber.
        if (fiber === undefined || fiber === current) self = true
        else others.push(fiber)
      }
      // Stryker disable next-line ArithmeticOperator: equivalent, returned only when self is false
      const count = others.length + (self ? 1 : 0)
      const rest = others.length === 0 ? Effect.void : Fiber.interruptAll(others)
      return self ? Effect.andThen(rest, Effect.interrupt) : Effect.as(rest, count)
    })
  }

  /** Interrupts every run in flight and waits until they have ended. */
  interruptAll(): Effect.Effect<void> {
    return Effect.asVoid(this.interrupt(() => true))
  }

  /**
   * Sends an interruption to every run in flight without waiting for them: a job that masks
   * interruption (`Effect.uninterruptible`) cannot hold the caller.
   */
  interruptAllUnsafe(): void {
    for (const fiber of this.fibers) fiber?.interruptUnsafe()
  }
}

const noAnnotations = (): Readonly<Record<string, unknown>> => ({})

/** The run of the fiber running now, if it is part of one. */
const currentRun = (): Task.RunInfo | undefined => {
  const fiber = Fiber.getCurrent()
  return fiber === undefined ? undefined : Context.getOrUndefined(fiber.context, CurrentRun)
}

/**
 * A run's log annotations, one object for every run of a job context: `base` (the context's own
 * annotations) and `tickwork.task`, `tickwork.slot` and `tickwork.attempt`, which read
 * {@link CurrentRun} from the fiber that reads them. Loggers read annotations in the logging
 * fiber, and a fiber forked from a run (detached too) keeps that run's `CurrentRun`, so each
 * log names its own run; `Effect.annotateLogs` inside a run copies the values it reads then.
 * Against a literal per run this saves an overlay, the literal and formatting the task id (a
 * generated id is formatted only when a log reads it). `util.inspect` (the default logger's
 * `console.log`) shows the values, not `[Getter]`.
 */
const runAnnotations = (base: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  const annotations: Record<string, unknown> = { ...base }
  Object.defineProperties(annotations, {
    "tickwork.task": { enumerable: true, get: () => currentRun()?.id },
    "tickwork.slot": { enumerable: true, get: () => currentRun()?.slot },
    "tickwork.attempt": { enumerable: true, get: () => currentRun()?.attempt },
    [inspect]: {
      enumerable: false,
      value: function (this: Record<string, unknown>) {
        return { ...this }
      },
    },
  })
  return annotations
}

/** Node's `util.inspect.custom`: how `console.log` formats an object. */
const inspect = Symbol.for("nodejs.util.inspect.custom")

/** Logs a failed run at Warning and a dead one at Error, naming the task, slot and attempt. */
const logFailure = (run: Task.RunInfo, cause: Cause.Cause<unknown>): Effect.Effect<void> => {
  const label = `task ${run.id}, slot ${new Date(run.slot).toISOString()}, attempt ${run.attempt}`
  for (const reason of cause.reasons) {
    if (reason._tag === "Die") return Effect.logError(`tickwork run died (${label})`, cause)
  }
  for (const reason of cause.reasons) {
    if (reason._tag === "Fail") {
      return reason.error instanceof RunTimedOut
        ? Effect.logWarning(`tickwork run timed out after ${reason.error.afterMs} ms (${label})`)
        : Effect.logWarning(`tickwork run failed (${label})`, cause)
    }
  }
  // Interrupted only: by a cancel or a shutdown, which are recorded, not errors.
  return Effect.void
}
