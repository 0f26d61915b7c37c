/* Corpus replay: a main() for a libFuzzer target built without libFuzzer. Runs every file named
 * on the command line, and every regular file of every directory named (sorted), through
 * LLVMFuzzerTestOneInput once. Exits 1 if nothing was replayed (a wrong path should not pass).
 * The target aborts on a failed property, which fails the test. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    uint8_t *data;
    size_t n;

    if (!f || fstat(fileno(f), &st)) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        exit(2);
    }
    /* exactly the file's size, so that ASan sees any read past the input */
    data = malloc(st.st_size ? (size_t)st.st_size : 1);
    n = fread(data, 1, (size_t)st.st_size, f);
    fclose(f);
    printf("replay %s (%zu bytes)\n", path, n);
    fflush(stdout);
    LLVMFuzzerTestOneInput(data, n);
    free(data);
    return 1;
}

static int select_all(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

int main(int argc, char **argv)
{
    int count = 0;

    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st)) {
            fprintf(stderr, "replay: no such file or directory: %s\n", argv[i]);
            return 2;
        }
        if (!S_ISDIR(st.st_mode)) {
            count += replay_file(argv[i]);
            continue;
        }
        struct dirent **names;
        int n = scandir(argv[i], &names, select_all, alphasort);
        for (int j = 0; j < n; j++) {
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s", argv[i], names[j]->d_name);
            if (!stat(path, &st) && S_ISREG(st.st_mode))
                count += replay_file(path);
            free(names[j]);
        }
        free(names);
    }
    printf("replayed %d inputs\n", count);
    return count ? 0 : 1;
}
