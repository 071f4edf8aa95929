// An MCP host with OAuth signs in to Herald through the identity provider its RFC 9728 metadata
// names, with the TypeScript MCP SDK's own client: the 401, the protected resource metadata, the
// provider's metadata, dynamic client registration, the authorization code flow with PKCE (the
// provider consents at once, as a browser that has signed in would), the token, then a tool call
// that Lorebase authorizes as the person the token names. tests/integration/test_oidc.py runs it:
//
//     node dist/mcp_oauth.js HERALD_MCP_URL
//
// It prints one JSON line: the tool's text and whether it was an error.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";

const [mcpUrl] = process.argv.slice(2);
if (!mcpUrl) throw new Error("usage: mcp_oauth.js HERALD_MCP_URL");
const redirectUrl = "http://127.0.0.1:9/callback"; // never reached: the code is read from the redirect

class Host implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  code?: string;

  get redirectUrl(): string {
    return redirectUrl;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "Lorebase test host",
      redirect_uris: [redirectUrl],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.client;
  }
  saveClientInformation(information: OAuthClientInformationMixed): void {
    this.client = information;
  }
  tokens(): OAuthTokens | undefined {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }
  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    // The browser: the provider answers with a redirect to the host's callback, carrying the code.
    const answer = await fetch(authorizationUrl, { redirect: "manual" });
    const location = answer.headers.get("location");
    if (!location) throw new Error(`the provider answered ${answer.status} without a redirect`);
    this.code = new URL(location).searchParams.get("code") ?? undefined;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }
}

const host = new Host();
const connect = async (): Promise<Client> => {
  const client = new Client({ name: "lorebase-test-host", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: host }));
  return client;
};

let client: Client;
try {
  client = await connect();
  throw new Error("Herald let a host in without a credential");
} catch (error) {
  if (!(error instanceof UnauthorizedError) || !host.code) throw error;
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: host });
  await transport.finishAuth(host.code); // the code and the PKCE verifier for the access token
  client = await connect();
}
const result = await client.callTool({ name: "lorebase_record", arguments: { kind: "Supplier", key: "S-1001" } });
const content = Array.isArray(result.content) ? result.content : [];
const text = content.map((block: { type: string; text?: string }) => block.text ?? "").join("\n");
console.log(JSON.stringify({ error: Boolean(result.isError), text, token: Boolean(host.saved?.access_token) }));
await client.close();
