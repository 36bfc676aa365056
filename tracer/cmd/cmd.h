/* The commands of the cutrace CLI (tracer/main.c lists them). */
#ifndef CT_CMD_H
#define CT_CMD_H

#include "tracer.h"

/* Each gets argv with argv[0] = the command's name and returns the exit
 * code.  No command calls another: what two commands share is in a room
 * below (session, out, doctor, diag, ...). */
int cmd_run(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_scenarios(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_pack(int argc, char **argv);

#endif
