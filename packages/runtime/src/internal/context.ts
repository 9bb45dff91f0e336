/**
 * @internal
 * What of a caller's context follows a task into its runs (SPEC §16): everything but the
 * caller's fiber-local values and `Effect.runSync`'s scheduler.
 */
import { Context, Scheduler as EffectScheduler, References, Scope, Tracer } from "effect"

/**
 * Fiber-local values a caller's context carries that must not follow a task into its runs
 * (SPEC §16): the caller's span and Scope, its log annotations and log spans, its span
 * annotations and links, and its stack frame.
 */
const fiberLocals: ReadonlyArray<string> = [
  Tracer.ParentSpan.key,
  Scope.Scope.key,
  References.CurrentLogAnnotations.key,
  References.CurrentLogSpans.key,
  References.CurrentStackFrame.key,
  References.CurrentLogLevel.key,
  References.TracerSpanAnnotations.key,
  References.TracerSpanLinks.key,
]

/** @internal `context` without its fiber-local values (a new context only when it has some). */
export const withoutFiberLocals = (context: Context.Context<never>): Context.Context<never> => {
  const map = context.mapUnsafe
  const runSync = isRunSyncScheduler(map.get(EffectScheduler.Scheduler.key))
  if (!runSync && !fiberLocals.some((key) => map.has(key))) return context
  const services = new Map(map)
  for (const key of fiberLocals) services.delete(key)
  if (runSync) services.delete(EffectScheduler.Scheduler.key)
  return Context.makeUnsafe(services)
}

/**
 * @internal Whether `scheduler` is the one `Effect.runSync` runs its effect with: its yields are
 * microtasks, meant for that one synchronous call. It must not follow a task into its runs (a
 * job that yields would hold the event loop until it ends) nor drive the actor.
 */
export const isRunSyncScheduler = (scheduler: unknown): boolean =>
  scheduler instanceof EffectScheduler.MixedScheduler && scheduler.executionMode === "sync"
