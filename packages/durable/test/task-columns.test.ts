/**
 * The SQLite insert lays a new task's values out flat (`pushTaskValues`), with the columns every
 * new task starts alike in as literals in its text (`NEW_TASK_LITERALS`), instead of building
 * its record (`taskRecord`, which PostgreSQL's insert takes): together they must give every
 * column of the record its value, in the record's order, or a row would be written shifted.
 */
import { describe, expect, it } from "@effect/vitest"
import { Breaker, Retry } from "@tickwork/core"
import {
  BOUND_TASK_COLUMNS,
  NEW_TASK_LITERALS,
  pushTaskValues,
  TASK_COLUMNS,
  taskRecord,
} from "../src/internal/codec.ts"
import type { NewTask } from "../src/internal/model.ts"

const plain: NewTask = {
  id: "a",
  handler: "h",
  payload: '{"n":1}',
  schedule: { kind: "once", at: 5 } as NewTask["schedule"],
  priority: 1,
  retry: Retry.none as NewTask["retry"],
  missedRuns: "catch-up",
  pauseAfter: 0,
  timeoutMs: 0,
  seq: 7,
  slot: 5,
  now: 3,
}

// Every optional field set, each to a value no other column has.
const full: NewTask = {
  ...plain,
  id: "b",
  tags: ["x", "y"],
  windowMs: 11,
  group: "g",
  key: "k",
  breaker: {
    key: "own:b",
    name: "b",
    policy: Breaker.resolve({ failures: 2, coolDown: 1_000 }) as Breaker.Resolved,
  },
  dedup: { key: "d", mode: "throttle", windowMs: 13 } as NewTask["dedup"],
  timeoutMs: 17,
  pauseAfter: 19,
  priority: 23,
}

/** The value of one of the SQL literals the table uses: NULL, a number or a quoted string. */
const fromLiteral = (literal: string): unknown =>
  literal === "NULL"
    ? null
    : literal.startsWith("'")
      ? literal.slice(1, -1).replaceAll("''", "'")
      : Number(literal)

describe("task columns", () => {
  it.each([
    ["a plain task", plain],
    ["a task with every option", full],
  ])("%s: the literals and pushTaskValues give taskRecord's values", (_, task) => {
    const record: Record<string, unknown> = taskRecord(task)
    expect(TASK_COLUMNS).toEqual(Object.keys(record))
    const values: Array<unknown> = ["before"]
    pushTaskValues(task, values)
    expect(values).toEqual(["before", ...BOUND_TASK_COLUMNS.map((c) => record[c])])
    for (const [column, literal] of Object.entries(NEW_TASK_LITERALS)) {
      expect(TASK_COLUMNS).toContain(column)
      expect([column, fromLiteral(literal)]).toEqual([column, record[column]])
    }
  })

  it("tasks one after another, with and without a retry policy of their own, each get theirs", () => {
    const own = { ...plain, id: "c", retry: Retry.resolve({ maxRetries: 3 }) as NewTask["retry"] }
    for (const task of [plain, own, full, own, plain]) {
      const values: Array<unknown> = []
      pushTaskValues(task, values)
      expect(values[BOUND_TASK_COLUMNS.indexOf("retry")]).toBe(JSON.stringify(task.retry))
    }
  })
})
