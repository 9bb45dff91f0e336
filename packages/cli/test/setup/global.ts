/**
 * Vitest global setup of the cli project: the store commands are tested against PostgreSQL too: a throwaway PostgreSQL cluster for the run
 * (`Postgres.globalSetup` of @tickwork/testkit), its URL handed to the tests as
 * `inject("databaseUrl")`. With DATABASE_URL set, that server is used instead and left alone.
 */
import * as Postgres from "@tickwork/testkit/Postgres"
import type { TestProject } from "vitest/node"

export default (project: TestProject) => Postgres.globalSetup(project, "the cli tests")
