import { createSocket, type RemoteInfo } from "node:dgram";
import { afterAll, beforeAll } from "vitest";

/**
 * A tiny authoritative DNS server on loopback UDP (RFC 1035 §4.1) that answers TXT questions
 * from a table the test fills: NXDOMAIN for names it does not hold, an empty answer for other
 * types. Enough for a resolver (node:dns `Resolver`, pointed at it with setServers) to look up
 * a domain-verification record, as a real zone would answer it.
 */
export interface DnsServer {
  /** `127.0.0.1:<port>`, for DNS_RESOLVER_SERVERS. */
  readonly address: string;
  /** Every name asked about, lower-cased, in order. */
  readonly questions: readonly string[];
  /** Sets the TXT records of `name`; each record is one or more character-strings (at most 255 bytes each). */
  setTxt(name: string, records: string[][]): void;
  clear(name: string): void;
}

const TXT = 16;
const IN = 1;

function readName(msg: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let at = offset;
  while (msg[at]! > 0) {
    const length = msg[at]!;
    labels.push(msg.subarray(at + 1, at + 1 + length).toString("latin1"));
    at += 1 + length;
  }
  return { name: labels.join(".").toLowerCase(), end: at + 1 };
}

function answer(query: Buffer, table: Map<string, string[][]>): { reply: Buffer; name: string } {
  const { name, end } = readName(query, 12);
  const type = query.readUInt16BE(end);
  const question = query.subarray(12, end + 4);
  const records = table.get(name);
  const answers = records && type === TXT ? records : [];
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2); // id
  // QR, AA, RD echoed, RA; RCODE 3 (NXDOMAIN) for a name the zone does not hold.
  header.writeUInt16BE(0x8480 | (query.readUInt16BE(2) & 0x0100) | (records ? 0 : 3), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(answers.length, 6);
  const rrs = answers.map((strings) => {
    const rdata = Buffer.concat(strings.map((s) => Buffer.concat([Buffer.from([Buffer.byteLength(s)]), Buffer.from(s)])));
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
    rr.writeUInt16BE(TXT, 2);
    rr.writeUInt16BE(IN, 4);
    rr.writeUInt32BE(60, 6);
    rr.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([rr, rdata]);
  });
  return { reply: Buffer.concat([header, question, ...rrs]), name };
}

export async function startDnsServer() {
  const table = new Map<string, string[][]>();
  const questions: string[] = [];
  const socket = createSocket("udp4");
  socket.on("message", (msg: Buffer, from: RemoteInfo) => {
    try {
      const { reply, name } = answer(msg, table);
      questions.push(name);
      socket.send(reply, from.port, from.address);
    } catch {
      // A malformed query gets no answer, as from a real server that drops it.
    }
  });
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  const server: DnsServer & { close(): Promise<void> } = {
    address: `127.0.0.1:${socket.address().port}`,
    get questions() {
      return [...questions];
    },
    setTxt: (name, records) => void table.set(name.toLowerCase(), records),
    clear: (name) => void table.delete(name.toLowerCase()),
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
  return server;
}

/** A DNS server for the enclosing file or block, started before the hooks registered after it. */
export function useDnsServer(): DnsServer {
  let current: Awaited<ReturnType<typeof startDnsServer>> | undefined;
  beforeAll(async () => {
    current = await startDnsServer();
  });
  afterAll(async () => {
    await current?.close();
  });
  const need = () => {
    if (!current) throw new Error("the DNS server is not running here: use it inside a test or hook");
    return current;
  };
  return {
    get address() {
      return need().address;
    },
    get questions() {
      return need().questions;
    },
    setTxt: (name, records) => need().setTxt(name, records),
    clear: (name) => need().clear(name),
  };
}
