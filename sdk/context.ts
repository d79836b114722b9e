/**
 * Turn the PluginApi a host hands to `activate` into the Effect services the
 * plugin's code asks for (`yield* Fs`, `yield* Process`, …).
 */
import { Context, Effect } from "effect"
import { type Broker, Env, Fs, Host, Log, type PluginApi, Process, Storage } from "./plugin-api.ts"

export const brokerContext = (api: PluginApi): Context.Context<Broker> =>
  Context.make(Process, api.process).pipe(
    Context.add(Fs, api.fs),
    Context.add(Env, api.env),
    Context.add(Storage, api.storage),
    Context.add(Host, api.host),
    Context.add(Log, api.log),
  )

/** Provide every broker service of `api` to an effect. */
export const withBroker =
  (api: PluginApi) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, Broker>> =>
    Effect.provideContext(effect, brokerContext(api)) as Effect.Effect<A, E, Exclude<R, Broker>>
