// Drive `krc mcp` with an official MCP TypeScript client and print what happened as JSON.
//
//   node drive.mjs SDK TRANSPORT TARGET [TOKEN] < plan.json
//     SDK        v1 (@modelcontextprotocol/sdk 1.x, legacy 2025-11-25 handshake) or
//                v2 (@modelcontextprotocol/client 2.x, pinned to the stateless 2026-07-28)
//     TRANSPORT  stdio (TARGET: a JSON array, the command line) or http (TARGET: the URL)
//   plan.json: {"calls": [{"name": ..., "arguments": {...}}, ...]}
//
// The SDK clients check a tool's structuredContent against its outputSchema themselves
// (callTool throws when it does not conform); a result is reported with its isError flag,
// a thrown error with its code and message.
import { readFileSync } from 'node:fs';

const [sdk, transportKind, target, token] = process.argv.slice(2);
const plan = JSON.parse(readFileSync(0, 'utf8'));

async function load() {
    if (sdk === 'v1') {
        const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
        const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
        const { StreamableHTTPClientTransport } = await import(
            '@modelcontextprotocol/sdk/client/streamableHttp.js'
        );
        return { Client, StdioClientTransport, StreamableHTTPClientTransport, options: {} };
    }
    const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
    return {
        Client,
        StdioClientTransport,
        StreamableHTTPClientTransport,
        options: { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    };
}

const out = { sdk, transport: transportKind, calls: [] };
const lib = await load();
let transport;
if (transportKind === 'stdio') {
    const cmd = JSON.parse(target);
    transport = new lib.StdioClientTransport({ command: cmd[0], args: cmd.slice(1), stderr: 'pipe' });
} else {
    const headers = token ? { Authorization: `Bearer ${token}` } : {};
    transport = new lib.StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
}
const client = new lib.Client({ name: 'krc-test', version: '1.0.0' }, lib.options);
try {
    await client.connect(transport);
    out.protocolVersion =
        typeof client.getNegotiatedProtocolVersion === 'function'
            ? client.getNegotiatedProtocolVersion()
            : transport.protocolVersion;
    out.era = typeof client.getProtocolEra === 'function' ? client.getProtocolEra() : 'legacy';
    out.server = client.getServerVersion();
    const listed = await client.listTools();
    out.tools = listed.tools.map((t) => ({
        name: t.name,
        readOnly: t.annotations?.readOnlyHint === true,
        hasOutputSchema: !!t.outputSchema,
    }));
    for (const call of plan.calls) {
        try {
            const r = await client.callTool({ name: call.name, arguments: call.arguments });
            out.calls.push({
                name: call.name,
                isError: r.isError === true,
                text: r.content?.[0]?.text?.slice(0, 300),
                structured: r.structuredContent ?? null,
            });
        } catch (e) {
            out.calls.push({ name: call.name, thrown: true, code: e.code ?? null, message: String(e.message) });
        }
    }
} catch (e) {
    out.fatal = String(e && e.stack ? e.stack : e);
} finally {
    await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(out) + '\n');
