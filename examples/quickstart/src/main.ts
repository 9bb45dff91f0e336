// The core's deterministic driver on the system clock: schedule a few tasks, then sleep until
// the next slot and run what is due, printing what ran when. (The Effect runtime does this
// sleeping for you; this shows the kernel underneath.)
import { Clock, Driver, Schedule } from "@tickwork/core"

const start = Clock.system.now()
const at = (t: number) => `+${String(t - start).padStart(4)} ms`

const driver = Driver.make({
  clock: Clock.system,
  onRun: (r) =>
    console.log(
      `${at(r.startedAt)}  ${r.id.padEnd(10)} slot ${at(r.scheduledFor)}  late ${r.startedAt - r.scheduledFor} ms  ${r.outcome.kind}${r.continuation === "retry" ? ` → retry at ${at(r.nextSlot as number)}` : ""}`,
    ),
})

driver.scheduleUnsafe({ id: "reminder", schedule: Schedule.once(300), job: () => {} })
driver.scheduleUnsafe({ id: "heartbeat", schedule: Schedule.fixedRate(250), job: () => {} })
let attempts = 0
driver.scheduleUnsafe({
  id: "flaky",
  schedule: Schedule.once(100),
  retry: { maxRetries: 3, base: 50, factor: 2 },
  job: () => {
    if (++attempts < 3) throw new Error(`attempt ${attempts} failed`)
  },
})
driver.scheduleUnsafe({
  id: "follow-up",
  schedule: Schedule.once(500),
  priority: "high",
  job: () => {
    driver.scheduleUnsafe({ id: "spawned", schedule: Schedule.once(200), job: () => {} })
  },
})

const stopAt = start + 1_200
while (Clock.system.now() < stopAt) {
  driver.runDue()
  const next = Math.min(driver.nextSlot() ?? stopAt, stopAt)
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - Clock.system.now())))
}
driver.cancel("heartbeat")
const s = driver.stats()
console.log(
  `\ndone: ${s.done}, failed: ${s.failed}, cancelled: ${s.cancelled}, still scheduled: ${s.scheduled}`,
)
