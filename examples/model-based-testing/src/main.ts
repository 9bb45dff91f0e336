// Model-based testing of an application's own tasks with @tickwork/runtime/testing, as a short
// report: every lifecycle path of each task walked on a real scheduler, then the fast-check
// command model with the app's tasks and rules. The same checks run as tests:
//
//   pnpm --filter @tickwork/example-model-based-testing start
//   pnpm test --project model-based-testing
import { LifecyclePaths } from "@tickwork/runtime/testing"
import * as Commands from "@tickwork/runtime/testing/commands"
import { Effect } from "effect"
import { chargeOrder, digest, retryPayment, sendDigest, type TaskOptions } from "./app.ts"
import { fakeMailer, fakePayments } from "./fakes.ts"
import { rules, templates } from "./model.ts"

const RUNS = Number(process.env.FC_RUNS_MODEL ?? 200)
const startAt = new Date("2026-03-26T12:00:00Z")
const mail = fakeMailer()
const payments = fakePayments()

const tasks: Array<{ options: TaskOptions; task: LifecyclePaths.TaskUnderTest<never> }> = [
  {
    options: digest,
    task: {
      ...digest,
      job: (outcome, run) => {
        mail.state.down = outcome === "fail"
        return sendDigest(run).pipe(Effect.provide(mail.layer))
      },
    },
  },
  {
    options: retryPayment("A-1001"),
    task: {
      ...retryPayment("A-1001"),
      job: (outcome, run) => {
        payments.state.declines = outcome === "fail" ? 1 : 0
        return chargeOrder("A-1001")(run).pipe(Effect.provide(payments.layer))
      },
    },
  },
]

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`

console.log(
  "Lifecycle paths (xstate/graph over the task machine), each walked on a fresh scheduler:",
)
for (const { options, task } of tasks) {
  const t0 = Date.now()
  const report = await Effect.runPromise(LifecyclePaths.check({ task, layer: { startAt } }))
  const { maxRetries, pauseAfter, recurring } = report.input
  console.log(
    `  ${options.id.padEnd(22)} maxRetries=${maxRetries} pauseAfter=${pauseAfter} recurring=${recurring}: ` +
      `${report.paths} paths, ${report.steps} steps, ${report.transitions.length} transitions, ` +
      `${report.edges} edges, all held (${seconds(Date.now() - t0)})`,
  )
  for (const t of report.transitions) console.log(`      ${t}`)
}
console.log(`  digests delivered by the app's job: ${mail.state.sent.length}`)

console.log(`\nCommand model (fast-check), the app's tasks against the deterministic reference:`)
const model = await Commands.check({
  numRuns: RUNS,
  templates: templates(),
  startAt,
  advance: { max: 36 * 3_600_000 },
  invariant: rules,
})
console.log(
  `  ${model.runs} runs, ${model.commands} commands, ${model.occurrences} occurrences: traces, ` +
    `tasks and counts equal after every command, the app's rules held (${seconds(model.ms)})`,
)
