/**
 * An HTTP proxy on loopback that tunnels CONNECT requests (what undici's proxy agents send for
 * http and https targets alike) and records each target, for the proxy tests. `hosts` maps names
 * only the proxy knows (`model.test`) to addresses: loopback targets are never proxied, so a test
 * server on 127.0.0.1 is reached through the proxy by such a name.
 */
import { createServer } from "node:http";
import { connect, type AddressInfo } from "node:net";

export interface ConnectProxy {
  /** `http://127.0.0.1:<port>`, for HTTP_PROXY / HTTPS_PROXY. */
  url: string;
  /** `host:port` of every tunnel asked for, in order. */
  targets: string[];
  close(): Promise<void>;
}

export async function startConnectProxy(hosts: Record<string, string> = {}): Promise<ConnectProxy> {
  const targets: string[] = [];
  const proxy = createServer((_req, res) => res.writeHead(405).end());
  proxy.on("connect", (req, client, head) => {
    targets.push(req.url!);
    const [host, port] = req.url!.split(":");
    const upstream = connect(Number(port), hosts[host!] ?? host!, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    targets,
    close: () =>
      new Promise((r) => {
        proxy.closeAllConnections();
        proxy.close(() => r());
      }),
  };
}
