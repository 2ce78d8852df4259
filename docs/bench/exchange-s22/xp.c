#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int me, peer;
static unsigned char *sb, *rb;
static void xch(size_t s){MPI_Request r[2];MPI_Irecv(rb,(int)s,MPI_BYTE,peer,1,MPI_COMM_WORLD,&r[0]);MPI_Isend(sb,(int)s,MPI_BYTE,peer,1,MPI_COMM_WORLD,&r[1]);MPI_Waitall(2,r,MPI_STATUSES_IGNORE);}
static void pp(size_t s){ if(me==0){MPI_Send(sb,(int)s,MPI_BYTE,1,2,MPI_COMM_WORLD);MPI_Recv(rb,(int)s,MPI_BYTE,1,2,MPI_COMM_WORLD,MPI_STATUS_IGNORE);} else {MPI_Recv(rb,(int)s,MPI_BYTE,0,2,MPI_COMM_WORLD,MPI_STATUS_IGNORE);MPI_Send(sb,(int)s,MPI_BYTE,0,2,MPI_COMM_WORLD);} }
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int c,char**v){MPI_Init(&c,&v);MPI_Comm_rank(MPI_COMM_WORLD,&me);peer=1-me;
 sb=malloc(1<<20);rb=malloc(1<<20);memset(sb,1,1<<20);memset(rb,0,1<<20);
 size_t sizes[]={512,4096};int NB=20,R=50;
 double *t=malloc(sizeof(double)*5*2*NB*R);int cnt[5][2]={{0}};
 for(int b=0;b<NB;b++)for(int si=0;si<2;si++)for(int m=0;m<5;m++){size_t s=sizes[si];
  for(int k=0;k<R+5;k++){
   if(m==1){xch(1<<20);pp(s);}
   if(m==2){for(size_t z=1;z<=(1<<20);z*=2)xch(z);pp(s);}
   if(m>=3){xch(1<<20);pp(s);for(int u=0;u<(m==3?3:10);u++){MPI_Barrier(MPI_COMM_WORLD);xch(s);}}
   MPI_Barrier(MPI_COMM_WORLD);double t0=MPI_Wtime();xch(s);double t1=MPI_Wtime()-t0,mx;
   MPI_Allreduce(&t1,&mx,1,MPI_DOUBLE,MPI_MAX,MPI_COMM_WORLD);
   if(k>=5)t[(m*2+si)*NB*R+cnt[m][si]++]=mx*1e6;}}
 if(me==0)for(int m=0;m<5;m++)for(int si=0;si<2;si++){double*x=t+(m*2+si)*NB*R;qsort(x,NB*R,sizeof(double),cmp);printf("mode %d size %zu median %.3f p25 %.3f\n",m,sizes[si],x[NB*R/2],x[NB*R/4]);}
 MPI_Finalize();}
