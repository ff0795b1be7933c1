/*
 * A qemu-user plugin that counts the instructions the emulated program executes, for measuring
 * generated code on hosts this machine cannot run natively (scripts/state-in-memory-table.sh).
 * Each translated block adds its instruction count to one counter when it runs (an inline add,
 * so counting costs little); at exit the plugin writes `insns N` through qemu's log (stderr).
 *
 * Built against qemu's own plugin header, which Debian ships only in the source package:
 *   cc -shared -fPIC -O2 -I "$QEMU_SRC/include/qemu" count.c -o libcount.so
 *   qemu-aarch64 -plugin ./libcount.so -L /usr/aarch64-linux-gnu ./program
 */
#include <inttypes.h>
#include <stdio.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

static uint64_t executed;

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	(void)id;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &executed,
						 qemu_plugin_tb_n_insns(tb));
}

static void on_exit(qemu_plugin_id_t id, void *unused)
{
	(void)id;
	(void)unused;
	char line[64];
	snprintf(line, sizeof line, "insns %" PRIu64 "\n", executed);
	qemu_plugin_outs(line);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	(void)info;
	(void)argc;
	(void)argv;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_exit, NULL);
	return 0;
}
