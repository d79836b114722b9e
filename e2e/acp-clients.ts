/**
 * The ACP test clients of an e2e file: each one `connectClient` makes is
 * closed after the test that made it (closeClientsAfterEach), so no
 * connection outlives its test.
 */
import { afterEach } from "vitest"
import type { AgentApp } from "@agentclientprotocol/sdk/unstable"
import { makeTestClient, type TestClient } from "../host/acp/testing.ts"

const clientsOfThisTest = new Set<TestClient>()

/** A recording client (host/acp/testing.ts) on `app`, closed after this test. */
export const connectClient = (app: AgentApp): TestClient => {
  const client = makeTestClient(app)
  clientsOfThisTest.add(client)
  return client
}

export const closeClientsAfterEach = (): void => {
  afterEach(() => {
    for (const client of clientsOfThisTest) client.close()
    clientsOfThisTest.clear()
  })
}
