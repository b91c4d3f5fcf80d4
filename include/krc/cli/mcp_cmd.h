/* `krc mcp`: serve the restart history to MCP clients, read-only.
 *
 *   krc mcp [--db FILE] [--kubeconfig FILE] [--context NAME]
 *           [--listen HOST:PORT] [--token-file FILE] [--log-level LEVEL]
 *
 * Without --listen: stdio (one JSON-RPC message per line on stdin and
 * stdout; logs on stderr only; exits at end of input). With --listen:
 * Streamable HTTP at /mcp (krc/mcp/mcp_http.h) until SIGTERM or SIGINT;
 * a bearer token file is required unless HOST is loopback. The database is
 * FILE, else $KRC_DB, else krc_store_default_path(), opened read-only on
 * first use. explain_pod reads the cluster with --kubeconfig, or in a pod
 * with its service account; without either it answers that it is off.
 * Exit status: 0 end of input or a stop signal, 1 error, 2 usage. */
#ifndef KRC_MCP_CMD_H
#define KRC_MCP_CMD_H

/* argv[0] is "mcp". Returns the process exit status. */
int krc_mcp_main(int argc, char **argv);

#endif
