/**
 * Model scripts that more than one e2e file plays: each is a Scenario for
 * testkit's scripted model (startWorld), named for what the CLI meets.
 */
import { message, rateLimited, rateLimitHeaders, type Scenario, text } from "../testkit/model-server.ts"

/**
 * A usage-limit rejection (429) whose window resets 4 s after the request,
 * then a reply for the continue sent at the reset and one for the next prompt.
 */
export const rejectedBeforeTheReset = (): Scenario => ({
  main: [
    // Computed at the request, not at the world's start: a loaded machine must not eat the seconds ahead.
    () => rateLimited({ retryAfter: 1, resetInSeconds: 4 }),
    message([text("Continued after the reset.")], {
      headers: rateLimitHeaders({ status: "allowed", utilization: 0.1 }),
    }),
    [text("And on.")],
  ],
})
