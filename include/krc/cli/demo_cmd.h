/* `krc demo [--out DIR]`. */
#ifndef KRC_DEMO_CMD_H
#define KRC_DEMO_CMD_H

int krc_demo_main(int argc, char **argv);

#endif
