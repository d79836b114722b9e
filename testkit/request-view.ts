/**
 * What the scripted model reads of a request: the view a turn function gets,
 * which kind of side request it is, and the metadata worth recording (never
 * the body or the system text: they hold the CLI's system prompt).
 */
import type { RequestView, SideKind, ToolResultView } from "./script.ts"

function textOf(content: unknown): string {
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  const parts: string[] = []
  for (const c of content) {
    if (c && typeof c === "object") {
      const o = c as Record<string, unknown>
      if (o.type === "text" && typeof o.text === "string") parts.push(o.text)
    }
  }
  return parts.join("\n")
}

function toolResultText(content: unknown): string {
  if (typeof content === "string") return content
  return textOf(content)
}

const SUMMARY_MARKERS = [
  "create a detailed summary of the conversation",
  "summary of the conversation so far",
  "Your task is to create a detailed summary",
  "summarize the conversation",
]
const TITLE_MARKERS = [
  "title for this conversation",
  "session title",
  "Generate a concise",
  "sentence-case title",
]

export function makeView(
  body: Record<string, unknown>,
  conversation: string,
  turnIndex: number,
): RequestView {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as Array<{
    role: string
    content: unknown
  }>
  return {
    body,
    model: String(body.model ?? ""),
    messages,
    conversation,
    turnIndex,
    lastUserText() {
      for (let i = messages.length - 1; i >= 0; i--) {
        const m = messages[i]
        if (m?.role === "user") return textOf(m.content)
      }
      return ""
    },
    firstUserText() {
      const m = messages.find((x) => x.role === "user")
      return m ? textOf(m.content) : ""
    },
    toolResults() {
      for (let i = messages.length - 1; i >= 0; i--) {
        const m = messages[i]
        if (m?.role !== "user") continue
        const out: ToolResultView[] = []
        if (Array.isArray(m.content)) {
          for (const c of m.content as Array<Record<string, unknown>>) {
            if (c?.type === "tool_result") {
              out.push({
                toolUseId: String(c.tool_use_id ?? ""),
                isError: c.is_error === true,
                content: toolResultText(c.content),
              })
            }
          }
        }
        return out
      }
      return []
    },
    toolNames() {
      const tools = Array.isArray(body.tools) ? (body.tools as Array<Record<string, unknown>>) : []
      return tools.map((t) => String(t.name ?? t.type ?? "?"))
    },
  }
}

/** Which kind of side request this is, or undefined for a scripted conversation. */
export function classifySide(body: Record<string, unknown>): SideKind | undefined {
  const view = makeView(body, "", 0)
  const last = view.lastUserText()
  if (SUMMARY_MARKERS.some((m) => last.includes(m))) return "compact"
  const tools = Array.isArray(body.tools) ? body.tools : []
  if (tools.length === 0) {
    const sys = JSON.stringify(body.system ?? "")
    if (TITLE_MARKERS.some((m) => sys.includes(m) || last.includes(m))) return "title"
    return "no_tools"
  }
  return undefined
}

export function estimateTokens(body: Record<string, unknown>): number {
  try {
    return Math.max(1, Math.ceil(JSON.stringify(body.messages ?? []).length / 4))
  } catch {
    return 1
  }
}

export function effortOf(body: Record<string, unknown>): unknown {
  const oc = body.output_config
  if (oc && typeof oc === "object") return (oc as Record<string, unknown>).effort
  return undefined
}

export function thinkingSettings(body: Record<string, unknown>): unknown {
  const t = body.thinking
  if (!t || typeof t !== "object") return t
  // settings only: type, budget_tokens, display
  const o = t as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const k of ["type", "budget_tokens", "display"]) if (k in o) out[k] = o[k]
  return out
}
