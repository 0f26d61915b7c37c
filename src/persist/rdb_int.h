/* Internal to tc_persist: RDB type and opcode numbers (Redis's rdb.h), shared by the writer
 * (rdb.c) and the loader (rdb_load.c). */
#ifndef TC_RDB_INT_H
#define TC_RDB_INT_H

/* object types */
enum {
    T_STRING = 0,
    T_LIST = 1,
    T_SET = 2,
    T_ZSET = 3,
    T_HASH = 4,
    T_ZSET_2 = 5,
    T_MODULE = 6,
    T_MODULE_2 = 7,
    T_HASH_ZIPMAP = 9,
    T_LIST_ZIPLIST = 10,
    T_SET_INTSET = 11,
    T_ZSET_ZIPLIST = 12,
    T_HASH_ZIPLIST = 13,
    T_LIST_QUICKLIST = 14,
    T_STREAM_LISTPACKS = 15,
    T_HASH_LISTPACK = 16,
    T_ZSET_LISTPACK = 17,
    T_LIST_QUICKLIST_2 = 18,
    T_STREAM_LISTPACKS_2 = 19,
    T_SET_LISTPACK = 20,
    T_STREAM_LISTPACKS_3 = 21,
};
/* opcodes */
enum {
    OP_FUNCTION2 = 245,
    OP_FUNCTION_PRE_GA = 246,
    OP_MODULE_AUX = 247,
    OP_IDLE = 248,
    OP_FREQ = 249,
    OP_AUX = 250,
    OP_RESIZEDB = 251,
    OP_EXPIRETIME_MS = 252,
    OP_EXPIRETIME = 253,
    OP_SELECTDB = 254,
    OP_EOF = 255,
};
#define LEN_6 0
#define LEN_14 1
#define LEN_32 0x80
#define LEN_64 0x81
#define LEN_ENCVAL 3
#define ENC_INT8 0
#define ENC_INT16 1
#define ENC_INT32 2
#define ENC_LZF 3

#define MCMETA_AUX "tc-mcmeta"

/* 1 when a collection value of type holds no element (rdb_payload.c). */
int rdb_value_empty(int type, void *ptr);

#endif
