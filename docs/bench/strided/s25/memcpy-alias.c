#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
int main(void){
  char *a=aligned_alloc(4096,1<<23), *b=aligned_alloc(4096,1<<23);
  memset(a,1,1<<23); memset(b,2,1<<23);
  size_t sizes[]={256,1024,2048,4096,16384,65536,262144,1<<20};
  for(unsigned si=0;si<8;si++){ size_t n=sizes[si];
    double base=0; int slow=0; char list[4096]=""; int len=0;
    for(int k=0;k<4096;k+=1){
      if(k>64 && k<4032 && k%64) continue;
      char *src=a+8192, *dst=b+8192+k;
      double best=1e18;
      for(int r=0;r<20;r++){double t=now(); memcpy(dst,src,n); double e=now()-t; if(e<best)best=e; __asm__ volatile(""::"r"(dst):"memory");}
      if(k==0) base=best;
      if(best>2*base){slow++; if(len<3000) len+=sprintf(list+len,"%d(%.1fx) ",k,best/base);}
    }
    printf("size %7zu: base %.2f us, slow offsets: %s\n",n,base/1e3,list);
  }
}
