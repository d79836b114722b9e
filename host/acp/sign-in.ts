/**
 * The one sign-in advice every place gives: the ACP agent's auth error, the
 * chat line a signed-out session shows, and the offline demo's last words
 * (testkit/demo.ts, both front ends). No imports: the terminal front end's
 * demo takes it without the ACP side.
 */
export const SIGN_IN_ADVICE =
  "Sign in with `claude auth login` in a terminal (`npx claude auth login` in a checkout of this repository), or set ANTHROPIC_API_KEY"
