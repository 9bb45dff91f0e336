/**
 * Vitest global setup of the inspector example: its dashboard is tested against a PostgreSQL fleet,
 * so a throwaway cluster is started for the run with the durable package's scripts
 * (`packages/durable/scripts/pg-up.sh`, stopped by `pg-down.sh`), its URL handed to the tests as
 * `inject("databaseUrl")`. With DATABASE_URL set, that server is used instead and left alone.
 */
import { execFileSync } from "node:child_process"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    /** A PostgreSQL URL whose user may create databases. */
    databaseUrl: string
  }
}

const script = (name: string) =>
  fileURLToPath(new URL(`../../../../packages/durable/scripts/${name}`, import.meta.url))

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  const given = process.env.DATABASE_URL
  if (given !== undefined && given !== "") {
    project.provide("databaseUrl", given)
    return undefined
  }
  const port = await freePort()
  let out: string
  try {
    out = execFileSync("bash", [script("pg-up.sh"), String(port)], {
      encoding: "utf8",
      env: { ...process.env, PG_OPTS: "-c fsync=off" },
      stdio: ["ignore", "pipe", "pipe"],
    })
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? ""
    throw new Error(
      `could not start a throwaway PostgreSQL for the dashboard test (set DATABASE_URL to use a running one):\n${stderr}`,
    )
  }
  const vars = Object.fromEntries(
    [...out.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1] as string, m[2] as string]),
  )
  const url = vars.DATABASE_URL
  const dir = vars.PGDIR
  if (url === undefined || dir === undefined) throw new Error(`pg-up.sh printed no URL: ${out}`)
  project.provide("databaseUrl", url)
  return () => {
    execFileSync("bash", [script("pg-down.sh"), dir], { stdio: "ignore" })
  }
}
