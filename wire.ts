/**
 * The wire: Zod schemas for every stream-json frame, control message, stored
 * transcript record and workflow file the plugin reads.
 *
 * Every schema is lenient: objects are loose (unknown fields pass through) and
 * only the fields the plugin reads are named, mostly optional. A frame type or
 * subtype nobody reads is kept as an Unknown frame without validation, which is
 * also the cheap path for the hot loop: dispatch on `type`/`subtype` first, run
 * a small schema only for frames the mapper uses.
 */
import { z } from "zod"
import { isObject } from "./values.ts"
import { type Check, compileCheck } from "./wire/check.ts"
import { dropTooDeep, mayNestTooDeep, repairToFit, splitGlued } from "./wire/repair.ts"

// ---------------------------------------------------------------------------
// Shared pieces

const str = z.string()
const num = z.number()
const bool = z.boolean()
const optStr = str.nullish()
const optNum = num.nullish()
const optBool = bool.nullish()

/** Anthropic usage, as the CLI copies it into assistant frames and results. */
export const Usage = z.looseObject({
  input_tokens: optNum,
  output_tokens: optNum,
  cache_read_input_tokens: optNum,
  cache_creation_input_tokens: optNum,
  output_tokens_details: z.looseObject({ thinking_tokens: optNum }).nullish(),
})
export type Usage = z.infer<typeof Usage>

/**
 * One content block of a message: text, thinking, tool_use, tool_result, image…
 * Only `type` is checked here (blocks are the bulk of every message); readers
 * check each field they use, so the type says `unknown` for them.
 */
export const ContentBlock = z.looseObject({ type: str })
export interface ContentBlock {
  readonly type: string
  readonly [key: string]: unknown
}

// Arrays first: a union tries its options in order, and a failed option costs an issue object.
export const MessageContent = z.union([z.array(ContentBlock), str])

export const ApiMessage = z.looseObject({
  id: optStr,
  model: optStr,
  role: optStr,
  content: MessageContent,
  usage: Usage.nullish(),
  stop_reason: optStr,
})
export type ApiMessage = z.infer<typeof ApiMessage>

/** A branded string: a frame type or subtype this file does not name. */
declare const unknownTag: unique symbol
export type UnknownName = string & { readonly [unknownTag]: true }

// ---------------------------------------------------------------------------
// system/* frames

const system = <S extends string, T extends z.core.$ZodLooseShape>(subtype: S, shape: T) =>
  z.looseObject({ type: z.literal("system"), subtype: z.literal(subtype), session_id: optStr, ...shape })

export const SystemInit = system("init", {
  model: str,
  session_id: str,
  permissionMode: optStr,
  // Long name lists: the arrays are checked here, their entries by the reader.
  tools: z.array(z.unknown()).nullish(),
  skills: z.array(z.unknown()).nullish(),
  slash_commands: z.array(z.unknown()).nullish(),
  cwd: optStr,
})
export const SystemStatus = system("status", {
  status: optStr,
  permissionMode: optStr,
  compact_result: optStr,
  compact_error: optStr,
})
export const SessionStateChanged = system("session_state_changed", { state: str })
export const CompactBoundary = system("compact_boundary", {
  compact_metadata: z.looseObject({ trigger: optStr, pre_tokens: optNum, post_tokens: optNum }).nullish(),
})
export const Informational = system("informational", {
  content: str,
  level: optStr,
  tool_use_id: optStr,
  tag: optStr,
})
const TaskUsage = z.looseObject({ total_tokens: optNum, tool_uses: optNum, duration_ms: optNum })
export const TaskStarted = system("task_started", {
  task_id: str,
  run_id: optStr,
  tool_use_id: optStr,
  description: optStr,
  subagent_type: optStr,
  is_backgrounded: optBool,
  spawn_depth: optNum,
  parent_task_id: optStr,
  task_type: optStr,
  workflow_name: optStr,
  prompt: optStr,
  skip_transcript: optBool,
  ambient: optBool,
})
export const TaskProgress = system("task_progress", {
  task_id: str,
  tool_use_id: optStr,
  description: optStr,
  subagent_type: optStr,
  usage: TaskUsage.nullish(),
  last_tool_name: optStr,
  summary: optStr,
  // A full snapshot on every agent move: its entries are checked where they are read (workflow.ts).
  workflow_progress: z.array(z.unknown()).nullish(),
})
export const TaskUpdated = system("task_updated", {
  task_id: str,
  patch: z.looseObject({ status: optStr, is_backgrounded: optBool, error: optStr, end_time: optNum }),
})
export const TaskNotification = system("task_notification", {
  task_id: str,
  tool_use_id: optStr,
  status: str,
  output_file: optStr,
  summary: optStr,
  usage: TaskUsage.nullish(),
  skip_transcript: optBool,
  ambient: optBool,
  summary_is_report: optBool,
})
export const ThinkingTokens = system("thinking_tokens", {
  estimated_tokens: optNum,
  estimated_tokens_delta: optNum,
  user_message_uuid: optStr,
})
export const ApiRetry = system("api_retry", {
  attempt: optNum,
  max_retries: optNum,
  retry_delay_ms: optNum,
  error_status: optNum,
  error: z.unknown().optional(),
})
export const PermissionDenied = system("permission_denied", {
  tool_name: optStr,
  tool_use_id: optStr,
  agent_id: optStr,
  message: optStr,
})
export const BackgroundTasksChanged = system("background_tasks_changed", {
  tasks: z.array(z.looseObject({ task_id: optStr, task_type: optStr })).nullish(),
})
export const SessionTitleChanged = system("session_title_changed", { title: optStr })

export type SystemInit = z.infer<typeof SystemInit>
export type SystemStatus = z.infer<typeof SystemStatus>
export type SessionStateChanged = z.infer<typeof SessionStateChanged>
export type CompactBoundary = z.infer<typeof CompactBoundary>
export type Informational = z.infer<typeof Informational>
export type TaskStarted = z.infer<typeof TaskStarted>
export type TaskProgress = z.infer<typeof TaskProgress>
export type TaskUpdated = z.infer<typeof TaskUpdated>
export type TaskNotification = z.infer<typeof TaskNotification>
export type ThinkingTokens = z.infer<typeof ThinkingTokens>
export type ApiRetry = z.infer<typeof ApiRetry>
export type PermissionDenied = z.infer<typeof PermissionDenied>
export type BackgroundTasksChanged = z.infer<typeof BackgroundTasksChanged>
export type SessionTitleChanged = z.infer<typeof SessionTitleChanged>
/** A system frame of a subtype nobody reads (kept, not validated; `type` is "system" at run time). */
export interface SystemOther {
  readonly type: UnknownName
  readonly subtype: UnknownName
  readonly [key: string]: unknown
}

// ---------------------------------------------------------------------------
// Conversation frames

/** One raw Anthropic stream event (message_start, content_block_*, message_delta, message_stop). */
export const StreamEventBody = z.looseObject({
  type: str,
  index: optNum,
  message: z.looseObject({ id: optStr, model: optStr, usage: Usage.nullish() }).nullish(),
  content_block: z.looseObject({ type: str, id: optStr, name: optStr }).nullish(),
  delta: z
    .looseObject({ type: optStr, text: optStr, thinking: optStr, partial_json: optStr, stop_reason: optStr })
    .nullish(),
  usage: Usage.nullish(),
})
export const StreamEvent = z.looseObject({
  type: z.literal("stream_event"),
  event: StreamEventBody,
  parent_tool_use_id: optStr,
  api_message_id: optStr,
  session_id: optStr,
})
export type StreamEvent = z.infer<typeof StreamEvent>

export const AssistantFrame = z.looseObject({
  type: z.literal("assistant"),
  message: ApiMessage,
  parent_tool_use_id: optStr,
  agent_id: optStr,
  uuid: optStr,
  error: z.unknown().optional(),
  session_id: optStr,
})
export type AssistantFrame = z.infer<typeof AssistantFrame>

export const UserFrame = z.looseObject({
  type: z.literal("user"),
  message: z.looseObject({ role: optStr, content: MessageContent }),
  parent_tool_use_id: optStr,
  agent_id: optStr,
  uuid: optStr,
  tool_use_result: z.unknown().optional(),
  isSynthetic: optBool,
  isCompactSummary: optBool,
  isReplay: optBool,
  origin: z.looseObject({ kind: optStr }).nullish(),
  session_id: optStr,
})
export type UserFrame = z.infer<typeof UserFrame>

/** One `modelUsage` entry of a result. */
export const ModelUsageEntry = z.looseObject({
  inputTokens: optNum,
  outputTokens: optNum,
  contextWindow: optNum,
  maxOutputTokens: optNum,
  thinkingTokens: optNum,
})
export const ResultFrame = z.looseObject({
  type: z.literal("result"),
  subtype: str,
  is_error: optBool,
  result: optStr,
  errors: z.array(str).nullish(),
  usage: Usage.nullish(),
  // Per model, read for one entry only (the session's model): see `ModelUsageEntry`.
  modelUsage: z.record(str, z.unknown()).nullish(),
  total_cost_usd: optNum,
  duration_ms: optNum,
  num_turns: optNum,
  user_message_uuid: optStr,
  user_message_uuids: z.array(str).nullish(),
  terminal_reason: optStr,
  // Why the model stopped on the turn's last message (2.1.332 sends it; older releases may not).
  stop_reason: optStr,
  session_id: optStr,
})
export type ResultFrame = z.infer<typeof ResultFrame>

const RateLimitWindow = z.looseObject({
  status: optStr,
  utilization: optNum,
  resetsAt: optNum,
})
/** `rate_limit_event.rate_limit_info`: utilization a 0-1 fraction, resets in unix seconds. */
export const RateLimitInfo = z.looseObject({
  status: str,
  resetsAt: optNum,
  rateLimitType: optStr,
  utilization: optNum,
  overageStatus: optStr,
  overageResetsAt: optNum,
  isUsingOverage: optBool,
  errorCode: optStr,
  unifiedWindows: z
    .union([
      z.record(str, RateLimitWindow),
      z.array(RateLimitWindow.extend({ id: optStr, rateLimitType: optStr })),
    ])
    .nullish(),
})
export type RateLimitInfo = z.infer<typeof RateLimitInfo>

export const RateLimitEvent = z.looseObject({
  type: z.literal("rate_limit_event"),
  rate_limit_info: RateLimitInfo,
  session_id: optStr,
})
export type RateLimitEvent = z.infer<typeof RateLimitEvent>

export const ToolProgress = z.looseObject({
  type: z.literal("tool_progress"),
  tool_use_id: str,
  tool_name: optStr,
  parent_tool_use_id: optStr,
  elapsed_time_seconds: optNum,
})
export type ToolProgress = z.infer<typeof ToolProgress>

// ---------------------------------------------------------------------------
// Control protocol

export const CanUseToolRequest = z.looseObject({
  subtype: z.literal("can_use_tool"),
  tool_name: str,
  input: z.unknown(),
  tool_use_id: optStr,
  agent_id: optStr,
  title: optStr,
  display_name: optStr,
  description: optStr,
  blocked_path: optStr,
  decision_reason: optStr,
  permission_suggestions: z.array(z.unknown()).nullish(),
  mcp_server: z.looseObject({ name: optStr, source: optStr }).nullish(),
  requires_user_interaction: optBool,
})
export type CanUseToolRequest = z.infer<typeof CanUseToolRequest>

export const McpMessageRequest = z.looseObject({
  subtype: z.literal("mcp_message"),
  server_name: str,
  message: z.looseObject({
    jsonrpc: optStr,
    id: z.union([str, num]).nullish(),
    method: optStr,
    params: z.unknown().optional(),
  }),
})
export type McpMessageRequest = z.infer<typeof McpMessageRequest>

export const HookCallbackRequest = z.looseObject({
  subtype: z.literal("hook_callback"),
  callback_id: str,
  input: z.unknown(),
  tool_use_id: optStr,
})
export type HookCallbackRequest = z.infer<typeof HookCallbackRequest>

export const ElicitationRequest = z.looseObject({
  subtype: z.literal("elicitation"),
  mcp_server_name: optStr,
  message: optStr,
  mode: optStr,
  url: optStr,
  elicitation_id: optStr,
  requested_schema: z.unknown().optional(),
})
export type ElicitationRequest = z.infer<typeof ElicitationRequest>

export const RequestUserDialogRequest = z.looseObject({
  subtype: z.literal("request_user_dialog"),
  dialog_kind: str,
  payload: z.unknown().optional(),
  tool_use_id: optStr,
})
export type RequestUserDialogRequest = z.infer<typeof RequestUserDialogRequest>

/** A control request of a subtype nobody reads (kept, not validated). */
export interface OtherControlRequest {
  readonly subtype: UnknownName
  readonly [key: string]: unknown
}

export type KnownControlRequest =
  | CanUseToolRequest
  | McpMessageRequest
  | HookCallbackRequest
  | ElicitationRequest
  | RequestUserDialogRequest
export type ControlRequestBody = KnownControlRequest | OtherControlRequest

const knownControlSubtypes = new Set([
  "can_use_tool",
  "mcp_message",
  "hook_callback",
  "elicitation",
  "request_user_dialog",
])
/** Narrows a control request to the subtypes the plugin reads (then `subtype` narrows it further). */
export const isKnownControlRequest = (request: ControlRequestBody): request is KnownControlRequest =>
  knownControlSubtypes.has(request.subtype)

const controlRequestFrame = <T extends z.ZodType>(request: T) =>
  z.looseObject({ type: z.literal("control_request"), request_id: str, request })

export interface ControlRequestFrame {
  readonly type: "control_request"
  readonly request_id: string
  readonly request: ControlRequestBody
  readonly [key: string]: unknown
}

export const ControlResponseFrame = z.looseObject({
  type: z.literal("control_response"),
  response: z.union([
    z.looseObject({ subtype: z.literal("success"), request_id: str, response: z.unknown().optional() }),
    z.looseObject({ subtype: z.literal("error"), request_id: str, error: str, error_code: optStr }),
  ]),
})
export type ControlResponseFrame = z.infer<typeof ControlResponseFrame>

export const ControlCancelRequest = z.looseObject({
  type: z.literal("control_cancel_request"),
  request_id: str,
})
export type ControlCancelRequest = z.infer<typeof ControlCancelRequest>

// ---------------------------------------------------------------------------
// Control responses the plugin reads

const InitializeModel = z.looseObject({
  value: str,
  displayName: optStr,
  description: optStr,
  resolvedModel: optStr,
  supportedEffortLevels: z.array(str).nullish(),
  supportsAdaptiveThinking: optBool,
  supportsFastMode: optBool,
  supportsEffort: optBool,
})
export const InitializeResponse = z.looseObject({
  commands: z
    .array(z.looseObject({ name: str, description: optStr, argumentHint: optStr, builtin: optBool }))
    .nullish(),
  agents: z.array(z.looseObject({ name: str, description: optStr, model: optStr })).nullish(),
  models: z.array(InitializeModel).nullish(),
  account: z
    .looseObject({
      email: optStr,
      organization: optStr,
      subscriptionType: optStr,
      tokenSource: optStr,
      apiKeySource: optStr,
      apiProvider: optStr,
    })
    .nullish(),
  current_permission_mode: optStr,
  fast_mode_state: optStr,
  fast_mode_disabled_reason: optStr,
  claude_code_version: optStr,
  pid: optNum,
})
export type InitializeResponse = z.infer<typeof InitializeResponse>

export const GetSettingsResponse = z.looseObject({
  effective: z.record(str, z.unknown()).nullish(),
  sources: z.array(z.looseObject({ source: str, settings: z.unknown().optional() })).nullish(),
  applied: z.looseObject({ effort: optStr, ultracode: optBool, model: optStr }).nullish(),
})
export type GetSettingsResponse = z.infer<typeof GetSettingsResponse>

const UsageMeter = z.looseObject({ utilization: optNum, resets_at: optStr }).nullish()
/** `get_usage`: utilization a 0-100 percentage, resets_at ISO 8601. */
export const GetUsageResponse = z.looseObject({
  session: z.unknown().optional(),
  subscription_type: optStr,
  rate_limits_available: optBool,
  rate_limits: z
    .looseObject({
      five_hour: UsageMeter,
      seven_day: UsageMeter,
      seven_day_oauth_apps: UsageMeter,
      seven_day_opus: UsageMeter,
      seven_day_sonnet: UsageMeter,
      model_scoped: z
        .array(z.looseObject({ display_name: str, utilization: optNum, resets_at: optStr }))
        .nullish(),
      extra_usage: z.unknown().optional(),
    })
    .nullish(),
})
export type GetUsageResponse = z.infer<typeof GetUsageResponse>

/** `set_model`: the model the CLI resolved the value to (`sonnet` → `claude-sonnet-5-5`). */
export const SetModelResponse = z.looseObject({ model: optStr })
export type SetModelResponse = z.infer<typeof SetModelResponse>

/** `set_permission_mode`: the mode now in force (`manual` answers `default`). */
export const SetPermissionModeResponse = z.looseObject({ mode: optStr })
export type SetPermissionModeResponse = z.infer<typeof SetPermissionModeResponse>

/** `interrupt`: what was still queued behind the interrupted turn. */
export const InterruptResponse = z.looseObject({
  still_queued: z.unknown().optional(),
  cancelled: z.unknown().optional(),
})
export type InterruptResponse = z.infer<typeof InterruptResponse>

/** An answer nobody reads (`apply_flag_settings` has no body, `stop_task` answers `{}`). */
export const AckResponse = z.looseObject({})
export type AckResponse = z.infer<typeof AckResponse>

/**
 * Every control request the plugin sends, by subtype, with the schema of its
 * success answer (2.1.332, `o_control_sweep`). A subtype outside this table
 * cannot be sent; an answer is decoded here before any caller sees it (an
 * absent body reads as `{}`).
 */
export const ControlAnswers = {
  initialize: InitializeResponse,
  get_usage: GetUsageResponse,
  get_settings: GetSettingsResponse,
  interrupt: InterruptResponse,
  set_model: SetModelResponse,
  set_permission_mode: SetPermissionModeResponse,
  apply_flag_settings: AckResponse,
  stop_task: AckResponse,
} as const
export type ControlSubtype = keyof typeof ControlAnswers
export type ControlAnswer<S extends ControlSubtype> = z.infer<(typeof ControlAnswers)[S]>

export const AskUserQuestionInput = z.looseObject({
  questions: z.array(
    z.looseObject({
      question: str,
      header: optStr,
      multiSelect: optBool,
      options: z.array(z.looseObject({ label: str, description: optStr })).nullish(),
    }),
  ),
})
export type AskUserQuestionInput = z.infer<typeof AskUserQuestionInput>

// ---------------------------------------------------------------------------
// The frame union and the line decoder

/** A frame of a type nobody reads (kept, not validated). */
export interface UnknownFrame {
  readonly type: UnknownName
  readonly [key: string]: unknown
}

export type KnownSystemFrame =
  | SystemInit
  | SystemStatus
  | SessionStateChanged
  | CompactBoundary
  | Informational
  | TaskStarted
  | TaskProgress
  | TaskUpdated
  | TaskNotification
  | ThinkingTokens
  | ApiRetry
  | PermissionDenied
  | BackgroundTasksChanged
  | SessionTitleChanged
export type SystemFrame = KnownSystemFrame | SystemOther

/** Frames the plugin reads: `type` (and `subtype` for system frames) narrow this union. */
export type KnownFrame =
  | KnownSystemFrame
  | StreamEvent
  | AssistantFrame
  | UserFrame
  | ResultFrame
  | RateLimitEvent
  | ToolProgress
  | ControlRequestFrame
  | ControlResponseFrame
  | ControlCancelRequest

/**
 * Every decoded frame. Unknown types and system frames of unknown subtypes are
 * UnknownFrame; narrow with `isKnownFrame` first (a branded `type` keeps TS
 * from narrowing the whole union by `type`).
 */
export type Frame = KnownFrame | UnknownFrame

export type Decoded =
  /** `problem`: something was dropped from the frame to make it fit (wire/repair.ts); the rest is here. */
  | { readonly kind: "frame"; readonly frame: Frame; readonly problem?: string }
  /** Frames glued on one line: those that decoded, and one problem for the line. */
  | {
      readonly kind: "frames"
      readonly frames: ReadonlyArray<Frame>
      readonly problem: string
      readonly requestId?: string
    }
  | { readonly kind: "blank" }
  /** `requestId`: the bad line was a control request with this id (the CLI waits for an answer to it). */
  | { readonly kind: "error"; readonly message: string; readonly requestId?: string }

const systemSchemas: Record<string, z.ZodType> = {
  init: SystemInit,
  status: SystemStatus,
  session_state_changed: SessionStateChanged,
  compact_boundary: CompactBoundary,
  informational: Informational,
  task_started: TaskStarted,
  task_progress: TaskProgress,
  task_updated: TaskUpdated,
  task_notification: TaskNotification,
  thinking_tokens: ThinkingTokens,
  api_retry: ApiRetry,
  permission_denied: PermissionDenied,
  background_tasks_changed: BackgroundTasksChanged,
  session_title_changed: SessionTitleChanged,
}
const controlRequestSchemas: Record<string, z.ZodType> = {
  can_use_tool: controlRequestFrame(CanUseToolRequest),
  mcp_message: controlRequestFrame(McpMessageRequest),
  hook_callback: controlRequestFrame(HookCallbackRequest),
  elicitation: controlRequestFrame(ElicitationRequest),
  request_user_dialog: controlRequestFrame(RequestUserDialogRequest),
}
const OtherControlRequestFrame = controlRequestFrame(z.looseObject({ subtype: str }))
const frameSchemas: Record<string, z.ZodType> = {
  assistant: AssistantFrame,
  user: UserFrame,
  result: ResultFrame,
  rate_limit_event: RateLimitEvent,
  tool_progress: ToolProgress,
  control_response: ControlResponseFrame,
  control_cancel_request: ControlCancelRequest,
}

const hasOwn = Object.prototype.hasOwnProperty

interface SchemaDef {
  readonly type: string
  readonly shape?: Record<string, z.ZodType>
  readonly innerType?: z.ZodType
  readonly element?: z.ZodType
  readonly options?: ReadonlyArray<z.ZodType>
  readonly keyType?: z.ZodType
  readonly valueType?: z.ZodType
}
const defOf = (schema: z.ZodType): SchemaDef => (schema as unknown as { _zod: { def: SchemaDef } })._zod.def

/**
 * A validator twin of a loose schema whose objects strip unknown keys instead
 * of copying them. The decoders only ask it yes or no and keep the parsed JSON
 * itself, so every unknown field still reaches the reader; it just skips Zod's
 * copy of the many fields nobody reads (the hot path).
 */
const stripped = (schema: z.ZodType): z.ZodType => {
  const def = defOf(schema)
  switch (def.type) {
    case "object":
      return z.object(
        Object.fromEntries(Object.entries(def.shape ?? {}).map(([key, value]) => [key, stripped(value)])),
      )
    case "optional":
      return stripped(def.innerType as z.ZodType).optional()
    case "nullable":
      return stripped(def.innerType as z.ZodType).nullable()
    case "array":
      return z.array(stripped(def.element as z.ZodType))
    case "union":
      return z.union((def.options ?? []).map(stripped) as [z.ZodType, z.ZodType, ...z.ZodType[]])
    case "record":
      return z.record(def.keyType as z.core.$ZodRecordKey, stripped(def.valueType as z.ZodType))
    default:
      return schema
  }
}
/**
 * true when `value` fits `schema` (its check compiled once, wire/check.ts; no copy made):
 * the caller keeps its own value, with every unknown field, typed by the schema.
 */
export const conforms = <T extends z.ZodType>(schema: T, value: unknown): value is z.infer<T> =>
  compileCheck(schema)(value)

const strippedAll = (table: Record<string, z.ZodType>): Record<string, z.ZodType> =>
  Object.fromEntries(Object.entries(table).map(([key, schema]) => [key, stripped(schema)]))

/** Every schema decodeValue checks a frame with, as written and as the twin it checks with (wire-check.test.ts). */
export const frameSchemasChecked = (): ReadonlyArray<z.ZodType> => {
  const written = [
    ...Object.values(systemSchemas),
    ...Object.values(controlRequestSchemas),
    ...Object.values(frameSchemas),
    OtherControlRequestFrame,
    StreamEvent,
  ]
  return [...written, ...written.map(stripped)]
}

/** A frame's schema as its twin (for repair's issues) and the check compiled from it (for every frame). */
interface Validator {
  readonly schema: z.ZodType
  readonly check: Check
}
const validator = (schema: z.ZodType): Validator => {
  const twin = stripped(schema)
  return { schema: twin, check: compileCheck(twin) }
}
const validatorsOf = (table: Record<string, z.ZodType>): Record<string, Validator> =>
  Object.fromEntries(Object.entries(table).map(([key, schema]) => [key, validator(schema)]))

const systemValidators = validatorsOf(systemSchemas)
const controlRequestValidators = validatorsOf(controlRequestSchemas)
const frameValidators = validatorsOf(frameSchemas)
const otherControlRequestValidator = validator(OtherControlRequestFrame)

/** The validator for a parsed object, or undefined when its type is not read. */
const validatorOf = (value: Record<string, unknown>, type: string): Validator | undefined => {
  if (type === "system") {
    const subtype = value.subtype
    return typeof subtype === "string" && hasOwn.call(systemValidators, subtype)
      ? systemValidators[subtype]
      : undefined
  }
  if (type === "control_request") {
    const request = value.request as { subtype?: unknown } | null | undefined
    const subtype = typeof request === "object" && request !== null ? request.subtype : undefined
    return typeof subtype === "string" && hasOwn.call(controlRequestValidators, subtype)
      ? controlRequestValidators[subtype]
      : otherControlRequestValidator
  }
  return hasOwn.call(frameValidators, type) ? frameValidators[type] : undefined
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
const nullish = (value: unknown): boolean => value === undefined || value === null
const isOptStr = (value: unknown): boolean => nullish(value) || typeof value === "string"
const isOptNum = (value: unknown): boolean =>
  nullish(value) || (typeof value === "number" && Number.isFinite(value))
const isOptUsage = (usage: unknown): boolean => {
  if (nullish(usage)) return true
  if (!isRecord(usage)) return false
  const details = usage.output_tokens_details
  return (
    isOptNum(usage.input_tokens) &&
    isOptNum(usage.output_tokens) &&
    isOptNum(usage.cache_read_input_tokens) &&
    isOptNum(usage.cache_creation_input_tokens) &&
    (nullish(details) || (isRecord(details) && isOptNum(details.thinking_tokens)))
  )
}

/**
 * stream_event, the most frequent frame, checked by hand: exactly what
 * `StreamEvent` says (wire.test.ts holds the two equal on mutated frames),
 * at a fraction of Zod's cost. A frame this refuses goes through Zod and
 * its repair.
 */
const isStreamEvent = (value: Record<string, unknown>): value is StreamEvent => {
  const event = value.event
  if (!isRecord(event) || typeof event.type !== "string") return false
  if (!(isOptStr(value.parent_tool_use_id) && isOptStr(value.api_message_id) && isOptStr(value.session_id)))
    return false
  if (!(isOptNum(event.index) && isOptUsage(event.usage))) return false
  const { message, content_block: block, delta } = event
  if (
    !nullish(message) &&
    !(isRecord(message) && isOptStr(message.id) && isOptStr(message.model) && isOptUsage(message.usage))
  )
    return false
  if (
    !nullish(block) &&
    !(isRecord(block) && typeof block.type === "string" && isOptStr(block.id) && isOptStr(block.name))
  )
    return false
  return (
    nullish(delta) ||
    (isRecord(delta) &&
      isOptStr(delta.type) &&
      isOptStr(delta.text) &&
      isOptStr(delta.thinking) &&
      isOptStr(delta.partial_json) &&
      isOptStr(delta.stop_reason))
  )
}

const issueText = (error: z.ZodError): string =>
  error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join(".") || "(frame)"}: ${issue.message}`)
    .join("; ")

/** true for the frame types (and system subtypes) this file names; narrows `Frame` to `KnownFrame`. */
export const isKnownFrame = (frame: Frame): frame is KnownFrame => {
  const type: string = frame.type
  if (type === "stream_event" || type === "control_request") return true
  if (type === "system") {
    const subtype = (frame as { subtype?: unknown }).subtype
    return typeof subtype === "string" && hasOwn.call(systemSchemas, subtype)
  }
  return hasOwn.call(frameSchemas, type)
}

const streamEventValidator = validator(StreamEvent)

/** `type/subtype` of a frame, for its diagnostic (a control request's subtype sits in its body). */
const labelOf = (record: Record<string, unknown>): string => {
  const body = record.request
  const subtype =
    record.type === "control_request" ? (isObject(body) ? body.subtype : undefined) : record.subtype
  return `${String(record.type)}${typeof subtype === "string" ? `/${subtype}` : ""}`
}
const tooDeepText = (path: string): string => `${path} (nested too deep)`

/** One diagnostic for what repair removed from a frame that is still delivered. */
const droppedText = (label: string, dropped: ReadonlyArray<string>): string =>
  `${label}: dropped ${dropped.slice(0, 3).join("; ")}${dropped.length > 3 ? ` and ${dropped.length - 3} more` : ""}`

/**
 * Validate an already parsed value as a frame (for callers holding objects),
 * repaired in place when it can be (wire/repair.ts): nesting past the bound
 * and mistyped fields are dropped, and the frame comes with one `problem`
 * saying so. `deep: false` skips the depth walk for a value known shallow.
 */
const NOTHING_DROPPED: ReadonlyArray<string> = []

export const decodeValue = (value: unknown, deep = true): Decoded => {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return { kind: "error", message: "frame is not a JSON object" }
  const record = value as Record<string, unknown>
  const type = record.type
  if (typeof type !== "string") return { kind: "error", message: "frame has no type" }
  const tooDeep = deep ? dropTooDeep(record) : NOTHING_DROPPED
  if (type === "stream_event" && tooDeep.length === 0 && isStreamEvent(record))
    return { kind: "frame", frame: record }
  const checked = type === "stream_event" ? streamEventValidator : validatorOf(record, type)
  if (checked === undefined || checked.check(record)) {
    const frame = record as unknown as Frame
    return tooDeep.length === 0
      ? { kind: "frame", frame }
      : { kind: "frame", frame, problem: droppedText(labelOf(record), tooDeep.map(tooDeepText)) }
  }
  const label = labelOf(record)
  const repaired = repairToFit(checked.schema, record)
  if (repaired.ok)
    return {
      kind: "frame",
      frame: record as unknown as Frame,
      problem: droppedText(label, [...tooDeep.map(tooDeepText), ...repaired.dropped]),
    }
  const isRequest = type === "control_request"
  const message = `${label}: ${repaired.issues}`
  const requestId = isRequest ? record.request_id : undefined
  return typeof requestId === "string" ? { kind: "error", message, requestId } : { kind: "error", message }
}

const notJson = (line: string, cause: unknown): Decoded => {
  const message = cause instanceof Error ? cause.message : String(cause)
  return {
    kind: "error",
    message: `not JSON: ${message} (${line.length > 80 ? `${line.slice(0, 80)}…` : line})`,
  }
}

/** Frames glued on one line: each decoded, one diagnostic for the line (the gluing, and any bad piece). */
const decodeGlued = (pieces: ReadonlyArray<string>): Decoded => {
  const frames: Frame[] = []
  const problems = [`${pieces.length} frames on one line`]
  let requestId: string | undefined
  for (const piece of pieces) {
    let decoded: Decoded
    try {
      decoded = decodeValue(JSON.parse(piece), mayNestTooDeep(piece))
    } catch (cause) {
      decoded = notJson(piece, cause)
    }
    if (decoded.kind === "frame") {
      frames.push(decoded.frame)
      if (decoded.problem !== undefined) problems.push(decoded.problem)
    } else if (decoded.kind === "error") {
      problems.push(decoded.message)
      requestId ??= decoded.requestId
    } else if (decoded.kind === "frames") {
      frames.push(...decoded.frames)
      problems.push(decoded.problem)
    }
  }
  const problem = problems.join("; ")
  return requestId === undefined
    ? { kind: "frames", frames, problem }
    : { kind: "frames", frames, problem, requestId }
}

/** One stdout line → a frame (or frames glued on it), a blank, or one diagnostic. Never throws. */
export const decodeLine = (line: string): Decoded => {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch (cause) {
    if (line.trim() === "") return { kind: "blank" }
    const pieces = splitGlued(line)
    return pieces === undefined ? notJson(line, cause) : decodeGlued(pieces)
  }
  // A stream_event is read only through the fields isStreamEvent checks and is never passed on:
  // what nests in its other fields reaches nobody, so the most frequent frame skips the depth gate.
  const streamed = (value as { type?: unknown } | null)?.type === "stream_event"
  return decodeValue(value, !streamed && mayNestTooDeep(line))
}

// ---------------------------------------------------------------------------
// Stored transcript records (`<config dir>/projects/<cwd>/<session>.jsonl`)

const recordBase = {
  uuid: optStr,
  parentUuid: optStr,
  isSidechain: optBool,
  sessionId: optStr,
  agentId: optStr,
  timestamp: optStr,
}
export const UserRecord = z.looseObject({
  type: z.literal("user"),
  ...recordBase,
  message: z.looseObject({ role: optStr, content: MessageContent }),
  toolUseResult: z.unknown().optional(),
  isCompactSummary: optBool,
  isMeta: optBool,
  isSynthetic: optBool,
  origin: z.looseObject({ kind: optStr }).nullish(),
  promptId: optStr,
})
export const AssistantRecord = z.looseObject({
  type: z.literal("assistant"),
  ...recordBase,
  message: ApiMessage,
  requestId: optStr,
})
export const SystemRecord = z.looseObject({
  type: z.literal("system"),
  ...recordBase,
  subtype: optStr,
  content: optStr,
  level: optStr,
  compactMetadata: z.unknown().optional(),
})
export const SummaryRecord = z.looseObject({ type: z.literal("summary"), summary: str, leafUuid: optStr })
export const AiTitleRecord = z.looseObject({
  type: z.literal("ai-title"),
  aiTitle: optStr,
  title: optStr,
  sessionId: optStr,
})
export const CustomTitleRecord = z.looseObject({
  type: z.literal("custom-title"),
  customTitle: optStr,
  title: optStr,
  sessionId: optStr,
})
export const AttachmentRecord = z.looseObject({
  type: z.literal("attachment"),
  ...recordBase,
  attachment: z.looseObject({ type: optStr }).nullish(),
})
export type UserRecord = z.infer<typeof UserRecord>
export type AssistantRecord = z.infer<typeof AssistantRecord>
export type SystemRecord = z.infer<typeof SystemRecord>
export type SummaryRecord = z.infer<typeof SummaryRecord>
export type AiTitleRecord = z.infer<typeof AiTitleRecord>
export type CustomTitleRecord = z.infer<typeof CustomTitleRecord>
export type AttachmentRecord = z.infer<typeof AttachmentRecord>
/** A record of a type nobody reads (queue-operation, last-prompt, mode, …), kept as is. */
export interface OtherRecord {
  readonly type: UnknownName
  readonly [key: string]: unknown
}
export type TranscriptRecord =
  | UserRecord
  | AssistantRecord
  | SystemRecord
  | SummaryRecord
  | AiTitleRecord
  | CustomTitleRecord
  | AttachmentRecord
  | OtherRecord

const recordSchemas: Record<string, z.ZodType> = {
  user: UserRecord,
  assistant: AssistantRecord,
  system: SystemRecord,
  summary: SummaryRecord,
  "ai-title": AiTitleRecord,
  "custom-title": CustomTitleRecord,
  attachment: AttachmentRecord,
}

const recordValidators = strippedAll(recordSchemas)

export type DecodedRecord =
  | { readonly kind: "record"; readonly record: TranscriptRecord }
  | { readonly kind: "blank" }
  | { readonly kind: "error"; readonly message: string }

/** Validate a parsed transcript record. */
export const decodeRecordValue = (value: unknown): DecodedRecord => {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return { kind: "error", message: "record is not a JSON object" }
  const type = (value as { type?: unknown }).type
  if (typeof type !== "string") return { kind: "error", message: "record has no type" }
  const validator = hasOwn.call(recordValidators, type) ? recordValidators[type] : undefined
  if (validator === undefined) return { kind: "record", record: value as OtherRecord }
  const parsed = validator.safeParse(value)
  return parsed.success
    ? { kind: "record", record: value as TranscriptRecord }
    : { kind: "error", message: `${type}: ${issueText(parsed.error)}` }
}

/** One transcript line → a record, a blank, or one diagnostic (a torn last line is an error). Never throws. */
export const decodeRecord = (line: string): DecodedRecord => {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch (cause) {
    if (line.trim() === "") return { kind: "blank" }
    return { kind: "error", message: `not JSON: ${cause instanceof Error ? cause.message : String(cause)}` }
  }
  return decodeRecordValue(value)
}

// ---------------------------------------------------------------------------
// Subagent and workflow files

/** `agent-<agentId>.meta.json` beside a subagent or workflow agent transcript. */
export const AgentMeta = z.looseObject({
  agentType: optStr,
  description: optStr,
  toolUseId: optStr,
  parentAgentId: optStr,
  spawnDepth: optNum,
  requestShape: optStr,
  model: optStr,
  workflowPhase: optStr,
})
export type AgentMeta = z.infer<typeof AgentMeta>

export const WorkflowPhaseEntry = z.looseObject({
  type: z.literal("workflow_phase"),
  index: num,
  title: str,
})
export const WorkflowAgentEntry = z.looseObject({
  type: z.literal("workflow_agent"),
  index: num,
  label: optStr,
  phaseIndex: optNum,
  phaseTitle: optStr,
  agentId: optStr,
  model: optStr,
  state: optStr,
  startedAt: optNum,
  queuedAt: optNum,
  attempt: optNum,
  lastToolName: optStr,
  lastToolSummary: optStr,
  promptPreview: optStr,
  tokens: optNum,
  toolCalls: optNum,
  durationMs: optNum,
  resultPreview: optStr,
  error: optStr,
  blocked: z.unknown().optional(),
  cached: optBool,
  agentType: optStr,
})
export type WorkflowPhaseEntry = z.infer<typeof WorkflowPhaseEntry>
export type WorkflowAgentEntry = z.infer<typeof WorkflowAgentEntry>

/** The Workflow tool's `tool_use_result` (`async_launched`). */
export const WorkflowLaunch = z.looseObject({
  status: optStr,
  taskId: optStr,
  taskType: optStr,
  workflowName: optStr,
  runId: optStr,
  summary: optStr,
  transcriptDir: optStr,
  scriptPath: optStr,
})
export type WorkflowLaunch = z.infer<typeof WorkflowLaunch>

/** The `output_file` record, and the run record `<session dir>/workflows/<runId>.json` (a superset). */
export const WorkflowRecord = z.looseObject({
  runId: optStr,
  taskId: optStr,
  summary: optStr,
  agentCount: optNum,
  logs: z.array(z.unknown()).nullish(),
  result: z.unknown().optional(),
  workflowProgress: z.array(z.looseObject({ type: optStr })).nullish(),
  totalTokens: optNum,
  totalToolCalls: optNum,
  status: optStr,
  startTime: optNum,
  durationMs: optNum,
  phases: z.array(z.looseObject({ title: str })).nullish(),
  workflowName: optStr,
  script: optStr,
  error: optStr,
})
export type WorkflowRecord = z.infer<typeof WorkflowRecord>

/** One line of a workflow run's `journal.jsonl`. */
export const JournalEntry = z.looseObject({
  type: str,
  key: optStr,
  agentId: optStr,
  label: optStr,
  phase: optStr,
  result: z.unknown().optional(),
  error: optStr,
})
export type JournalEntry = z.infer<typeof JournalEntry>
