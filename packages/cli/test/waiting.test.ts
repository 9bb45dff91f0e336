/**
 * SPEC §20.4: a task waiting on a flow-control limit, as `tickwork status`, `tickwork tasks` and
 * the dashboard's task table show it, for any store whose listing reports `waiting`.
 */
import type { StoreAdmin } from "@tickwork/durable"
import { describe, expect, it } from "vitest"
import { html } from "../src/DashboardPage.ts"
import { waitingText } from "../src/internal/waiting.ts"
import { statusText, tasksTable } from "../src/Store.ts"

const T0 = Date.UTC(2026, 4, 1, 10, 0, 0)

const task = (extra: object = {}): StoreAdmin.TaskDetails =>
  ({
    id: "mail-42",
    generation: 1,
    state: "scheduled",
    handler: "email",
    payload: { to: "a@example.com" },
    schedule: { kind: "once", at: T0 },
    priority: "normal",
    slot: T0,
    scheduledFor: T0,
    attempt: 1,
    runNumber: 0,
    consecutiveFailures: 0,
    deliveries: 0,
    leaseOwner: null,
    lastError: null,
    finishedAt: null,
    pausedReason: null,
    kind: "once",
    tags: [],
    window: undefined,
    breaker: undefined,
    timeoutMs: 0,
    leaseExpiresAt: null,
    missedRuns: "catch-up",
    createdAt: T0,
    updatedAt: T0,
    ...extra,
  }) as unknown as StoreAdmin.TaskDetails

describe("SPEC §20.4 waits in the CLI and the dashboard", () => {
  it("a concurrency wait and a rate wait, in words", () => {
    expect(waitingText({ cause: "concurrency", scope: "group:email", since: T0 })).toBe(
      "concurrency on group:email since 2026-05-01T10:00:00Z",
    )
    expect(
      waitingText({ cause: "rate-limited", scope: "key:c1", since: T0, until: T0 + 1_500 }),
    ).toBe("rate-limited on key:c1 since 2026-05-01T10:00:00Z until 2026-05-01T10:00:01.500Z")
    expect(waitingText(undefined)).toBeUndefined()
    expect(waitingText(null)).toBeUndefined()
  })

  it("status shows a waiting line and the state its cause; a task not waiting shows neither", () => {
    const waiting = task({ waiting: { cause: "concurrency", scope: "group:email", since: T0 } })
    const text = statusText(waiting)
    expect(text).toMatch(/^waiting\s+concurrency on group:email since 2026-05-01T10:00:00Z$/m)
    expect(text).toMatch(/^state\s+scheduled \(waiting: concurrency\)$/m)
    const plain = statusText(task())
    expect(plain).not.toMatch(/waiting/)
    expect(plain).toMatch(/^state\s+scheduled$/m)
  })

  it("the tasks table shows the cause beside the state", () => {
    const out = tasksTable({
      tasks: [
        task({ waiting: { cause: "rate-limited", scope: "key:c1", since: T0, until: T0 + 10 } }),
        task({ id: "other" }),
      ],
      total: 2,
      limit: 50,
    })
    expect(out).toMatch(/mail-42\s+scheduled \(waiting: rate-limited\)/)
    expect(out).toMatch(/other\s+scheduled\s+email/)
  })

  it("a control character in a key is shown escaped, never sent to the terminal", () => {
    const text = statusText(
      task({ waiting: { cause: "concurrency", scope: "key:a\u001b[2Jb", since: T0 } }),
    )
    expect(text).not.toContain("\u001b")
    expect(text).toContain("key:a\\x1b[2Jb")
  })

  it("the dashboard's task table has a waiting column, worded by the same function", () => {
    expect(html).toContain("<th>state</th><th>waiting</th>")
    expect(html).toContain(`const waitingText = ${waitingText.toString()}`)
    // The page's own template expression, as text.
    expect(html).toContain(
      `<td class="mono waiting">$${"{"}esc(waitingText(t.waiting) ?? "")}</td>`,
    )
  })
})
