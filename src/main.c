#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "version") == 0) {
        printf("krc %s\n", KRC_VERSION);
        return 0;
    }
    fprintf(stderr, "usage: krc run|version|help\n");
    return 2;
}
