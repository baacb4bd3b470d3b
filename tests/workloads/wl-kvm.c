/* wl-kvm N - a tiny KVM guest (real mode, 6 bytes of code) that writes to
 * an I/O port in a loop: N exits to the host, each handled here.  Exits
 * 77 if /dev/kvm cannot run a guest.  Prints "io_exits=N". */
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
        /* mov al, 0x42; out 0x10, al; jmp back to the out */
        static const unsigned char code[] = { 0xb0, 0x42, 0xe6, 0x10, 0xeb, 0xfa };
        long n = argc > 1 ? atol(argv[1]) : 1000, exits = 0;
        struct kvm_userspace_memory_region region = { .slot = 0, .guest_phys_addr = 0x1000, .memory_size = 0x1000 };
        struct kvm_regs regs = { .rip = 0x1000, .rflags = 0x2 };
        struct kvm_sregs sregs;
        struct kvm_run *run;
        int kvm, vm, vcpu, size;
        void *mem;

        if (n <= 0) {
                fprintf(stderr, "usage: wl-kvm N (N > 0)\n");
                return 2;
        }
        kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
        if (kvm < 0) {
                perror("wl-kvm: /dev/kvm");
                return 77;
        }
        vm = ioctl(kvm, KVM_CREATE_VM, 0);
        mem = mmap(NULL, 0x1000, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (vm < 0 || mem == MAP_FAILED) {
                perror("wl-kvm: cannot create a VM");
                return 77;
        }
        memcpy(mem, code, sizeof code);
        region.userspace_addr = (unsigned long)mem;
        vcpu = ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0 ? -1 : ioctl(vm, KVM_CREATE_VCPU, 0);
        size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
        if (vcpu < 0 || size <= 0) {
                perror("wl-kvm: cannot create a vCPU");
                return 77;
        }
        run = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
        if (run == MAP_FAILED || ioctl(vcpu, KVM_GET_SREGS, &sregs) < 0)
                return 77;
        sregs.cs.base = 0;
        sregs.cs.selector = 0;
        if (ioctl(vcpu, KVM_SET_SREGS, &sregs) < 0 || ioctl(vcpu, KVM_SET_REGS, &regs) < 0)
                return 77;
        while (exits < n) {
                if (ioctl(vcpu, KVM_RUN, 0) < 0) {
                        perror("wl-kvm: KVM_RUN");
                        return 1;
                }
                if (run->exit_reason != KVM_EXIT_IO) {
                        fprintf(stderr, "wl-kvm: unexpected exit reason %u\n", run->exit_reason);
                        return 1;
                }
                exits++;
        }
        printf("io_exits=%ld\n", exits);
        return 0;
}
