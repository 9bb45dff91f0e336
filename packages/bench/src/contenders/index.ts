/**
 * The contender lists. Every table draws its rows from here: to add a contender (the Effect
 * runtime, an inspection on/off variant, …) write a `VirtualContender` or `RealtimeContender`
 * and append it to the matching list.
 */
import { ceiling } from "./ceiling.ts"
import { coreDriver, coreKernel, coreTimer } from "./core.ts"
import { effectTestClock } from "./effectTestClock.ts"
import { objectHeap } from "./objectHeap.ts"
import { realtimeContenders as baselines, singleTimer, withLoad } from "./realtime.ts"
import { runtimeRealtime, runtimeVirtual } from "./runtime.ts"
import type { VirtualContender } from "./virtual.ts"
import { xstateActor } from "./xstateActor.ts"

/** Parts 1 and 2, in row order. The ceiling must be among them for the ratios. */
export const virtualContenders: ReadonlyArray<VirtualContender> = [
  ceiling,
  objectHeap,
  effectTestClock,
  xstateActor,
  coreDriver,
  coreKernel,
  runtimeVirtual(8, "runtime", "tickwork runtime (TestClock, 8 workers)"),
]

/** Part 4: the virtual contenders that can cancel. */
export const cancelContenders: ReadonlyArray<VirtualContender> = [ceiling, objectHeap, coreDriver]

/**
 * Part 3, in row order; the first is the limit. The last two rows repeat the limit and the
 * runtime with a competing CPU load.
 */
export const realtimeContenders = [
  ...baselines,
  coreTimer,
  runtimeRealtime(8),
  withLoad(singleTimer),
  withLoad(runtimeRealtime(8)),
]
