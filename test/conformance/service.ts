// connectrpc.conformance.v1.ConformanceService as the conformance runner's
// reference client expects it (docs/testing_servers.md of the conformance
// module): echo what was received, answer with the headers, trailers, data,
// delay or error the request asks for. Registered on our own server stack
// (startRpcServer), so unary Connect-binary calls over HTTP/2 run through the
// fast path in lib/rpc/unary-server.ts and everything else through connect-node.
import { create, createRegistry, type MessageShape } from "@bufbuild/protobuf";
import { anyPack, type Any } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import {
  BidiStreamRequestSchema,
  ClientStreamRequestSchema,
  ConformancePayload_ConnectGetInfoSchema,
  ConformancePayload_RequestInfoSchema,
  ConformancePayloadSchema,
  ConformanceService,
  file_connectrpc_conformance_v1_service,
  HeaderSchema,
  IdempotentUnaryRequestSchema,
  ServerStreamRequestSchema,
  UnaryRequestSchema,
  type ConformancePayload_RequestInfo,
  type Error as ConformanceError,
  type Header,
  type UnaryResponseDefinition,
} from "./gen/connectrpc/conformance/v1/service_pb.js";

/** The JSON codec must be able to write the `Any` values the payloads carry. */
export const conformanceRegistry = createRegistry(file_connectrpc_conformance_v1_service);

export function conformanceRoutes(router: ConnectRouter): void {
  router.service(ConformanceService, {
    async unary(req, ctx) {
      return { payload: await unaryAnswer(req.responseDefinition, requestInfo(ctx, [anyPack(UnaryRequestSchema, req)]), ctx) };
    },
    async idempotentUnary(req, ctx) {
      const info = requestInfo(ctx, [anyPack(IdempotentUnaryRequestSchema, req)]);
      info.connectGetInfo = create(ConformancePayload_ConnectGetInfoSchema, { queryParams: queryParams(ctx.url) });
      return { payload: await unaryAnswer(req.responseDefinition, info, ctx) };
    },
    async clientStream(requests, ctx) {
      let definition: UnaryResponseDefinition | undefined;
      const received: Any[] = [];
      for await (const req of requests) {
        if (received.length === 0) definition = req.responseDefinition;
        received.push(anyPack(ClientStreamRequestSchema, req));
      }
      return { payload: await unaryAnswer(definition, requestInfo(ctx, received), ctx) };
    },
    async *serverStream(req, ctx) {
      const definition = req.responseDefinition;
      const info = requestInfo(ctx, [anyPack(ServerStreamRequestSchema, req)]);
      if (!definition) return;
      setHeaders(ctx.responseHeader, definition.responseHeaders);
      setHeaders(ctx.responseTrailer, definition.responseTrailers);
      let sent = 0;
      for (const data of definition.responseData) {
        await sleep(definition.responseDelayMs, ctx.signal);
        yield { payload: create(ConformancePayloadSchema, { data, requestInfo: sent === 0 ? info : undefined }) };
        sent++;
      }
      if (definition.error) throw toConnectError(definition.error, sent === 0 ? info : undefined);
    },
    async *bidiStream(requests, ctx) {
      let definition: BidiDefinition | undefined;
      let fullDuplex = false;
      let sent = 0;
      let count = 0;
      const received: Any[] = [];
      for await (const req of requests) {
        received.push(anyPack(BidiStreamRequestSchema, req));
        if (++count === 1) {
          definition = req.responseDefinition;
          fullDuplex = req.fullDuplex;
          if (definition) {
            setHeaders(ctx.responseHeader, definition.responseHeaders);
            setHeaders(ctx.responseTrailer, definition.responseTrailers);
          }
        }
        if (!fullDuplex || !definition) continue;
        if (sent >= definition.responseData.length) {
          if (definition.error) throw toConnectError(definition.error, requestInfo(ctx, received.splice(0)));
          continue;
        }
        await sleep(definition.responseDelayMs, ctx.signal);
        // Full duplex echoes what arrived since the last response.
        const info = sent === 0 ? requestInfo(ctx, received.splice(0)) : create(ConformancePayload_RequestInfoSchema, { requests: received.splice(0) });
        yield { payload: create(ConformancePayloadSchema, { data: definition.responseData[sent], requestInfo: info }) };
        sent++;
      }
      if (!definition) return;
      // Half duplex: everything was read, now answer; the first response echoes all requests.
      const info = requestInfo(ctx, received);
      for (; sent < definition.responseData.length; sent++) {
        await sleep(definition.responseDelayMs, ctx.signal);
        yield { payload: create(ConformancePayloadSchema, { data: definition.responseData[sent], requestInfo: sent === 0 && !fullDuplex ? info : undefined }) };
      }
      if (definition.error) throw toConnectError(definition.error, sent === 0 ? info : undefined);
    },
    // unimplemented is left out on purpose: the server must answer Unimplemented by itself.
  });
}

type BidiDefinition = NonNullable<MessageShape<typeof BidiStreamRequestSchema>["responseDefinition"]>;

async function unaryAnswer(definition: UnaryResponseDefinition | undefined, info: ConformancePayload_RequestInfo, ctx: HandlerContext) {
  if (definition) {
    setHeaders(ctx.responseHeader, definition.responseHeaders);
    setHeaders(ctx.responseTrailer, definition.responseTrailers);
  }
  await sleep(definition?.responseDelayMs ?? 0, ctx.signal);
  if (definition?.response.case === "error") throw toConnectError(definition.response.value, info);
  return create(ConformancePayloadSchema, {
    data: definition?.response.case === "responseData" ? definition.response.value : new Uint8Array(0),
    requestInfo: info,
  });
}

function requestInfo(ctx: HandlerContext, requests: Any[]): ConformancePayload_RequestInfo {
  const timeout = ctx.timeoutMs();
  const requestHeaders: Header[] = [];
  ctx.requestHeader.forEach((value, name) => {
    requestHeaders.push(create(HeaderSchema, { name, value: [value] }));
  });
  return create(ConformancePayload_RequestInfoSchema, {
    requestHeaders,
    timeoutMs: timeout === undefined ? undefined : BigInt(Math.max(0, Math.round(timeout))),
    requests,
  });
}

function queryParams(url: string): Header[] {
  const params = new Map<string, string[]>();
  for (const [name, value] of new URL(url).searchParams) params.set(name, [...(params.get(name) ?? []), value]);
  return [...params].map(([name, value]) => create(HeaderSchema, { name, value }));
}

function setHeaders(target: Headers, headers: Header[]): void {
  for (const h of headers) for (const v of h.value) target.append(h.name, v);
}

function toConnectError(error: ConformanceError, info: ConformancePayload_RequestInfo | undefined): ConnectError {
  const details = [...(info ? [anyPack(ConformancePayload_RequestInfoSchema, info)] : []), ...error.details].map((any) => ({
    type: any.typeUrl.slice(any.typeUrl.lastIndexOf("/") + 1),
    value: any.value,
  }));
  const e = new ConnectError(error.message ?? "", error.code as number as Code);
  // The incoming form: the bytes go out as they are, no schema needed.
  e.details.push(...details);
  return e;
}

/** Waits `ms`, ending early with the call's abort reason (its deadline or the client leaving). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(ConnectError.from(signal.reason));
    const onAbort = () => {
      clearTimeout(timer);
      reject(ConnectError.from(signal.reason, Code.Canceled));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
