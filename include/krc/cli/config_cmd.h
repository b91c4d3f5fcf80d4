/* `krc config check|print|keys`: validate a configuration file, show the
 * effective configuration with secrets redacted, list every key. */
#ifndef KRC_CONFIG_CMD_H
#define KRC_CONFIG_CMD_H

/* argv[0] is "config". Returns the process exit code (0, 1 bad input, 2 usage). */
int krc_config_main(int argc, char **argv);

#endif
