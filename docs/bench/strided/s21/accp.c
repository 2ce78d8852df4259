#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kport.h"
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){
  MPI_Init(&argc,&argv); int r,P; MPI_Comm_rank(MPI_COMM_WORLD,&r); MPI_Comm_size(MPI_COMM_WORLD,&P);
  void*base; kp_win w; MPI_Aint WB=(MPI_Aint)48<<20; kp_win_create(WB,MPI_COMM_WORLD,&base,&w);
  char*src=malloc(WB); for(size_t i=0;i<(size_t)WB/8;i++)((double*)src)[i]=1.0;
  const char* ms[2]={"direct","datatype"}; double sc=2.0;
  long chunks[]={256,1024,4096,16384}; long rowsv[]={64,128,256,512,1024};
  for(int pat=0;pat<2;pat++) for(int ci=0;ci<4;ci++) for(int ri=0;ri<5;ri++){
    long ch=chunks[ci], rows=rowsv[ri]; if(ch*rows>(8L<<20)) continue;
    double med[2];
    for(int m=0;m<2;m++){ kp_strided_set_method(ms[m]); double v[25];
      MPI_Aint cnt[2]={ch,rows}, ss[1]={ch+64}, ds[1]={ch+64};
      for(int it=-5;it<25;it++){ kp_win_barrier(w); double t0=MPI_Wtime();
        if(pat==1||r==0) kp_acc_strided(KP_ACC_DOUBLE,&sc,src,ss,0,ds,cnt,1,1-r,w);
        kp_win_barrier(w); double t=MPI_Wtime()-t0; if(it>=0)v[it]=t; }
      qsort(v,25,sizeof(double),cmp); med[m]=v[12]*1e6; }
    if(r==0) printf("%s %6ld x %5ld (%7ld KiB): direct %9.1f datatype %9.1f  dt/d %.2f  dt ns/B %.3f\n", pat?"pairs":"one  ",ch,rows,ch*rows/1024,med[0],med[1],med[1]/med[0], med[1]*1e3/(ch*rows));
    fflush(stdout);
  }
  kp_win_free(&w); MPI_Finalize(); }
