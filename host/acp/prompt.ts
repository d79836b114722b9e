/**
 * An ACP prompt (content blocks) → the provider's prompt: one text, images,
 * and a skill. Rules:
 * - Text blocks join in order; a resource link becomes a mention of its URI
 *   (the CLI reads a file itself, under its own permissions: nothing here
 *   opens what a client names); an embedded text resource is quoted whole in
 *   a `<context>` block; an embedded image blob is an image.
 * - A prompt that is just `/name` of a skill the session offers is that
 *   skill (the provider sends it as the closing block, the one the CLI
 *   expands). `/name arguments`, and any other `/command`, go as text: the
 *   provider puts images first, so the text is the closing block and the CLI
 *   expands the command with its arguments itself.
 * - Audio, and binary resources that are not images, are refused with a
 *   clear error rather than dropped.
 */
import type * as acp from "@agentclientprotocol/sdk/unstable"
import type { ImageInput } from "../../sdk/protocol.ts"

export interface PromptParts {
  readonly text: string
  readonly images: ImageInput[]
  readonly skill?: string
}

export class PromptRefused extends Error {
  override readonly name = "PromptRefused"
}

const fileUri = (uri: string): string => (uri.startsWith("file://") ? decodeURIComponent(uri.slice(7)) : uri)

const context = (uri: string, text: string): string => `<context ref="${fileUri(uri)}">\n${text}\n</context>`

export const promptParts = (
  blocks: ReadonlyArray<acp.ContentBlock>,
  skills: ReadonlySet<string>,
): PromptParts => {
  const texts: string[] = []
  const images: ImageInput[] = []
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        texts.push(block.text)
        break
      case "image":
        images.push({ media_type: block.mimeType, data: block.data })
        break
      case "resource_link":
        texts.push(`@${fileUri(block.uri)}`)
        break
      case "resource": {
        const resource = block.resource
        if ("text" in resource) texts.push(context(resource.uri, resource.text))
        else if (resource.mimeType?.startsWith("image/"))
          images.push({ media_type: resource.mimeType, data: resource.blob })
        else
          throw new PromptRefused(
            `a binary resource (${resource.mimeType ?? "no type"}) cannot be sent: ${resource.uri}`,
          )
        break
      }
      case "audio":
        throw new PromptRefused("audio prompts are not supported (promptCapabilities.audio is false)")
      default:
        throw new PromptRefused(`unknown content block ${(block as { type: string }).type}`)
    }
  }
  const text = texts.join("\n")
  const command = /^\/([A-Za-z0-9][\w:.-]*)$/.exec(text.trim())
  if (command && skills.has(command[1]!)) return { text: "", images, skill: command[1]! }
  return { text, images }
}
