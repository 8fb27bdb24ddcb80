// A fetched page's bytes as text: in the charset its Content-Type names,
// UTF-8 when it names none or one the runtime does not know.

export function decodeBody(body: Buffer, contentType: string | null): string {
  const charset = /charset="?([\w-]+)/i.exec(contentType ?? "")?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8").decode(body);
  } catch {
    return body.toString("utf8");
  }
}
